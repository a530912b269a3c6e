package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateHelp = flag.Bool("update", false, "rewrite testdata/help/*.golden from the current output")

// TestHelpGolden holds the text of "kimi-lsp help" and of "kimi-lsp help
// COMMAND" for every command to testdata/help: a change to the help (a
// flag added, a summary reworded) shows up in review as a change to those
// files. Run with -update to rewrite them.
func TestHelpGolden(t *testing.T) {
	cases := map[string][]string{"all": {"help"}}
	for _, c := range commands {
		cases[c.name] = []string{"help", c.name}
	}
	for name, args := range cases {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, nil, &stdout, &stderr, func(string) string { return "" })
		if code != 0 || stderr.Len() != 0 {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q", args, code, stderr.String())
			continue
		}
		golden := filepath.Join("testdata", "help", name+".golden")
		if *updateHelp {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run the test with -update to create it)", err)
		}
		if got := stdout.String(); got != string(want) {
			t.Errorf("kimi-lsp %q printed\n%s\nwant (%s)\n%s", args, got, golden, want)
		}
	}
}
