package config

import (
	"strings"
	"testing"
)

// TestWorkspaceFileCannotTurnCompletionOn: whether and how often your code
// is sent as you type is yours to decide, not a cloned repository's (as
// jobs.maxConcurrent): a workspace file's completion.enable = true and its
// completion.debounceMs are ignored with a warning — it cannot undo a user
// file's enable = false, nor make every keystroke a request — while the
// rest of its completion table applies (enable = false included:
// TestCompletionWorkspaceFileMayTuneIt).
func TestWorkspaceFileCannotTurnCompletionOn(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "[completion]\nenable = false\ndebounceMs = 400\n")
	ws := writeFile(t, dir, WorkspaceFileName, "[completion]\nenable = true\ndebounceMs = 0\nmaxLines = 3\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	if c.Completion.Enable || c.Completion.DebounceMS != 400 {
		t.Errorf("after the workspace file: enable %v, debounceMs %d; want the user file's false, 400", c.Completion.Enable, c.Completion.DebounceMS)
	}
	if c.Completion.MaxLines != 3 {
		t.Errorf("maxLines %d, want the workspace file's 3", c.Completion.MaxLines)
	}
	var warned []string
	for _, err := range errs {
		if !IsWarning(err) {
			t.Errorf("error, want warnings only: %v", err)
		}
		if strings.Contains(err.Error(), "a workspace file cannot set completion.") {
			warned = append(warned, err.Error())
		}
	}
	if len(warned) != 2 {
		t.Errorf("warnings %q, want one for enable and one for debounceMs", warned)
	}
}
