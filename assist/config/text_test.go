package config

import (
	"strings"
	"testing"
	"unicode"
)

// TestCleanText (#21.5): escape sequences go whole, format and bidi
// characters go, other controls become one space.
func TestCleanText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Kimi: Review", "Kimi: Review"},
		{"\x1b[31mRed\x1b[0m title", "Red title"},
		{"a\x1b[1;31;4mb", "ab"},
		{"\x1b[?25lhidden cursor", "hidden cursor"},
		{"x\u009b31my", "xy"},                                        // C1 CSI
		{"\x1b]8;;https://evil.example\x07link\x1b]8;;\x07", "link"}, // OSC 8 hyperlink, BEL
		{"\x1b]0;title\x1b\\after", "after"},                         // OSC, ST
		{"\x1b]0;unterminated", ""},                                  // to the end
		{"\u009d0;t\u009cz", "z"},                                    // C1 OSC and ST
		{"reset\x1bcnow", "resetnow"},                                // ESC c (RIS)
		{"charset\x1b(Bset", "charsetset"},                           // ESC ( B
		{"lone\x1b", "lone"},
		{"Fix\u202e\u2066evil\u2069", "Fixevil"},
		{"a\u200eb\u200fc\u061cd\u202ae\u202bf\u202cg\u202dh\u2067i\u2068j", "abcdefghij"},
		{"zero\u200bwidth\ufeff", "zerowidth"},
		{"two\nlines\r\n\tand\u2028more", "two lines and more"},
		{"nul\x00and\x7fdel\u0085nel", "nul and del nel"},
		{"  spaced   out  ", "spaced out"},
		{"bad \xff utf8", "bad \ufffd utf8"},
		{"[31m stays: no ESC", "[31m stays: no ESC"},
	} {
		if got := cleanText(tc.in); got != tc.want {
			t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestWorkspaceTextCleaned (#21.5): what a workspace file says reaches
// the menu and the messages without escape, control, format or bidi
// characters.
func TestWorkspaceTextCleaned(t *testing.T) {
	dir := t.TempDir()
	ws := writeFile(t, dir, ".kimi-lsp.toml", "\"odd\\u001b[2Jkey\\u202e\" = 1\n[[actions]]\nname = \"audit\"\n"+
		"title = \"Review \\u001b[31mnow\\u001b[0m \\u202Eevil\\u2069\"\nresult = \"explain\"\nprompt = \"{{selection}}\"\n")
	c, errs := Default().WithWorkspaceFiles(ws)
	if a, ok := c.ActionFor("audit"); !ok || a.Title != RepoLabel+"Review now evil" {
		t.Errorf("title %q (found %v; problems %v)", a.Title, ok, errs)
	}
	bad := writeFile(t, t.TempDir(), ".kimi-lsp.toml", "[[actions]]\nname = \"bad\"\nresult = \"explain\"\n"+
		"prompt = \"{{selection}} {{x\\u202e\\u001b[5m}}\"\nmodel = \"kimi\\u202ek3\"\n")
	_, errs2 := Default().WithWorkspaceFiles(bad)
	all := append(errs, errs2...)
	if len(errs) == 0 || len(errs2) == 0 {
		t.Fatalf("problems: %v", all)
	}
	for _, err := range all {
		if i := strings.IndexFunc(err.Error(), func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
			t.Errorf("message %q has a control or format character at %d", err.Error(), i)
		}
		if strings.Contains(err.Error(), "[2J") {
			t.Errorf("message %q keeps an escape sequence's remains", err.Error())
		}
	}
	if !strings.Contains(errs[0].Error(), "oddkey") {
		t.Errorf("the unknown key is not named: %v", errs)
	}
}

// TestCleanLines (#30.7): a text of several lines keeps its lines, tabs
// and indentation, and loses what CleanText removes: escape sequences
// whole ("\x1b[31m" leaves no "[31m"), zero-width characters, bidi
// controls, the byte-order mark and other control characters.
func TestCleanLines(t *testing.T) {
	in := "\x1b[31mred\x1b[0m\u200b line\r\n\tif a {\u202e\n\t\treturn\u2060\ufeff\x07\n}\u2028end\x1b]8;;http://x\x07link\x1b]8;;\x07\u200c\u200d\u200e\u200f"
	want := "red line\n\tif a {\n\t\treturn\n}\nendlink"
	if got := CleanLines(in); got != want {
		t.Fatalf("CleanLines = %q, want %q", got, want)
	}
	if got := CleanText(in); got != "red line if a { return } endlink" {
		t.Fatalf("CleanText = %q", got)
	}
}
