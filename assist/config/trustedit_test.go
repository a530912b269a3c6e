package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestEditTrustFolders: kimi-lsp trust rewrites only trust.folders, in
// place, and keeps every other line of the user file.
func TestEditTrustFolders(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		folders  []string
		want     string
		err      error
	}{
		{"empty file", "", []string{"/a"}, "# Folders you trust (kimi-lsp trust DIR and kimi-lsp untrust DIR edit this list).\n[trust]\nfolders = [\"/a\"]\n", nil},
		{"appended", "model = \"kimi-k3\" # mine\n", []string{"/a"}, "model = \"kimi-k3\" # mine\n\n# Folders you trust (kimi-lsp trust DIR and kimi-lsp untrust DIR edit this list).\n[trust]\nfolders = [\"/a\"]\n", nil},
		{"replaced in place", "[trust]\nfolders = [\n  \"/a\", # old\n  \"/b]\",\n]\n[verify]\nenable = \"off\"\n", []string{"/a", "/c"}, "[trust]\nfolders = [\"/a\", \"/c\"]\n[verify]\nenable = \"off\"\n", nil},
		{"below the header", "[trust] # mine\n[verify]\nenable = \"off\"\n", []string{"/x y"}, "[trust] # mine\nfolders = [\"/x y\"]\n[verify]\nenable = \"off\"\n", nil},
		{"emptied", "[trust]\nfolders = [\"/a\"]\n", nil, "[trust]\nfolders = []\n", nil},
		{"kimi table", "[kimi]\nmodel = \"kimi-k3\"\n", []string{"/a"}, "[kimi]\nmodel = \"kimi-k3\"\n\n# Folders you trust (kimi-lsp trust DIR and kimi-lsp untrust DIR edit this list).\n[kimi.trust]\nfolders = [\"/a\"]\n", nil},
		{"inline table", "trust = {folders = [\"/a\"]}\n", []string{"/b"}, "", ErrTrustByHand},
		{"dotted key", "trust.folders = [\"/a\"]\n", []string{"/b"}, "", ErrTrustByHand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EditTrustFolders([]byte(tc.in), tc.folders)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, err := EditTrustFolders([]byte("model = \n"), []string{"/a"}); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Errorf("invalid TOML: got %v", err)
	}
}

// FuzzEditTrustFolders: whatever the user file holds, an edit either
// fails or gives a file that decodes to the same values but trust.folders,
// which is the new list.
func FuzzEditTrustFolders(f *testing.F) {
	for _, s := range []string{"", "[trust]\nfolders = [\"/a\"]\n", "[kimi]\nx = 1\n", "[trust]\n[trust.x]\nfolders = 1\n", "a = '''\n[trust]\nfolders = [\n'''\n"} {
		f.Add(s, "/new")
	}
	f.Fuzz(func(t *testing.T, in, dir string) {
		out, err := EditTrustFolders([]byte(in), []string{dir})
		if err != nil {
			return
		}
		var before, after map[string]any
		if _, err := toml.Decode(in, &before); err != nil {
			t.Fatalf("an edit of invalid TOML succeeded")
		}
		if _, err := toml.Decode(string(out), &after); err != nil {
			t.Fatalf("the edit is not valid TOML: %v\n%s", err, out)
		}
		table := "trust"
		if k, ok := before["kimi"].(map[string]any); ok && len(before) == 1 && len(k) > 0 {
			table = "kimi.trust"
		}
		if got := trustValue(after, table); !reflect.DeepEqual(got, []any{dir}) {
			t.Fatalf("trust.folders = %v, want [%q]", got, dir)
		}
		dropTrustValue(before, table)
		dropTrustValue(after, table)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other values changed:\n%v\n%v", before, after)
		}
	})
}
