// Package childenv is the environment of the programs kimi-lsp starts in
// the user's folders (the helper language servers, git): an allow-list of
// variables, never a credential. It is the one place that says what a
// credential variable is (Credential); every program kimi-lsp starts gets
// its environment from Filter, and kimi-lsp itself drops the credentials
// from its own environment at start (cmd/kimi-lsp).
package childenv

import "strings"

// Credential reports whether the variable name holds a credential: KIMI_*
// (the key and the endpoint it goes to), AWS_*, and any name ending in
// _TOKEN or _KEY or holding SECRET, PASSWORD, PASSWD or CREDENTIAL. The
// comparison ignores case.
func Credential(name string) bool {
	n := strings.ToUpper(name)
	switch {
	case strings.HasPrefix(n, "KIMI_"), strings.HasPrefix(n, "AWS_"),
		strings.HasSuffix(n, "_TOKEN"), strings.HasSuffix(n, "_KEY"), n == "TOKEN",
		strings.Contains(n, "SECRET"), strings.Contains(n, "PASSWORD"), strings.Contains(n, "PASSWD"),
		strings.Contains(n, "CREDENTIAL"):
		return true
	}
	return false
}

// Base reports whether a variable every program may get is name: the
// search path, the user's home and name, the locale, the time zone, the
// temporary directory and the XDG base directories.
func Base(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
		"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
		"SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "TEMP", "TMP":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// Filter returns the entries of environ ("NAME=value") whose name Base or
// allow (nil: none more) accepts and that are not credentials, in order.
func Filter(environ []string, allow func(name string) bool) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || Credential(name) {
			continue
		}
		if Base(name) || allow != nil && allow(name) {
			out = append(out, kv)
		}
	}
	return out
}
