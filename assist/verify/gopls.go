package verify

// goplsOptions are the initializationOptions gopls gets: diagnostics by
// pull (textDocument/diagnostic, which gopls offers only when asked), none
// computed on each edit (we pull them when a check needs them), and its
// analyzers off. The analyzers report warnings and hints, which a check
// does not count, and they cost most of a diagnosis: a pull after an edit
// of one file of a 50-file module took 190–560 ms with them and 30–50 ms
// without (gopls v0.23.0, 2 shared cores; bench/README.md). The type
// checker's errors, which a check counts, are not an analyzer's. One
// analyzer stays on: gopls v0.23.0 panics ("root analysisNode has nil
// actions") when every analyzer is off; nonewvars is one of the cheapest
// (it only reads the type checker's errors).
func goplsOptions() map[string]any {
	off := make(map[string]bool, len(goplsAnalyzers))
	for _, name := range goplsAnalyzers {
		off[name] = false
	}
	return map[string]any{"pullDiagnostics": true, "diagnosticsTrigger": "Save", "analyses": off}
}

// goplsAnalyzers are the analyzers gopls v0.23.0 runs by default, less
// nonewvars (from "gopls api-json"). A newer gopls's new analyzers run:
// verification is only slower then.
var goplsAnalyzers = []string{
	"QF1002", "QF1003", "QF1004", "QF1009", "QF1010", "QF1012", "S1000", "S1001", "S1003",
	"S1004", "S1007", "S1009", "S1010", "S1012", "S1017", "S1018", "S1019", "S1020",
	"S1023", "S1024", "S1028", "S1030", "S1031", "S1032", "S1033", "S1034", "S1035",
	"S1036", "S1037", "S1038", "S1039", "S1040", "SA1001", "SA1004", "SA1005", "SA1008",
	"SA1012", "SA1013", "SA1016", "SA2001", "SA3000", "SA3001", "SA4000", "SA4001",
	"SA4003", "SA4004", "SA4011", "SA4013", "SA4014", "SA4016", "SA4019", "SA4020",
	"SA4022", "SA4024", "SA4025", "SA4026", "SA4027", "SA4028", "SA4029", "SA4030",
	"SA4032", "SA5001", "SA5003", "SA5004", "SA5008", "SA6005", "SA6006", "SA9002",
	"SA9004", "SA9006", "SA9009", "SA9010", "any", "appends", "asmdecl", "assign", "atomic",
	"atomicalign", "atomictypes", "bloop", "bools", "buildtag", "cgocall", "composites",
	"copylocks", "deepequalerrors", "defers", "deprecated", "directive", "embed",
	"embedlit", "errorsas", "errorsastype", "errorsastypeshadow", "fillreturns",
	"fmtappendf", "forvar", "framepointer", "hostport", "httpresponse", "ifaceassert",
	"infertypeargs", "inline", "loopclosure", "lostcancel", "maprange", "mapsloop",
	"minmax", "newexpr", "nilfunc", "nilness", "noresultvalues", "omitzero", "plusbuild",
	"printf", "rangeint", "recursiveiter", "reflecttypefor", "scannererr", "shift",
	"sigchanyzer", "simplifycompositelit", "simplifyrange", "simplifyslice",
	"slicesbackward", "slicescontains", "slicessort", "slog", "sortslice", "sqlrowserr",
	"stditerators", "stdmethods", "stdversion", "stringintconv", "stringsbuilder",
	"stringscut", "stringscutprefix", "stringsseq", "structtag", "testingcontext",
	"testinggoroutine", "tests", "timeformat", "unmarshal", "unreachable", "unsafefuncs",
	"unsafeptr", "unusedfunc", "unusedparams", "unusedresult", "unusedvariable",
	"unusedwrite", "waitgroup", "waitgroupgo", "writestring", "yield",
}
