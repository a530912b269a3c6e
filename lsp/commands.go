package lsp

// The kimi.* commands (listed for editor setups in editors/README.md).
const (
	cmdExplain  = "kimi.explain"
	cmdFix      = "kimi.fix"
	cmdRewrite  = "kimi.rewrite"
	cmdDocument = "kimi.document"
	cmdTests    = "kimi.tests"
	cmdAction   = "kimi.action"
	cmdCancel   = "kimi.cancel"
	cmdStats    = "kimi.stats"
)

// commandNames lists every command the server executes, for
// executeCommandProvider.
func commandNames() []string {
	return []string{cmdExplain, cmdFix, cmdRewrite, cmdDocument, cmdTests, cmdAction, cmdCancel, cmdStats}
}

// Code action kinds we offer. Fix is a quickfix; Rewrite is the standard
// refactor.rewrite; the others live under refactor.kimi so that a client's
// Refactor menu shows them and "only" filters can select them.
const (
	kindQuickFix = "quickfix"
	kindRewrite  = "refactor.rewrite"
	kindExplain  = "refactor.kimi.explain"
	kindDocument = "refactor.kimi.document"
	kindTests    = "refactor.kimi.tests"
)

func codeActionKinds() []string {
	return []string{kindQuickFix, "refactor", kindRewrite, "refactor.kimi"}
}
