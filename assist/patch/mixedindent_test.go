package patch_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// goRaw is a tab-indented Go file holding a raw string indented with
// spaces.
const goRaw = "package demo\n\nfunc config() string {\n\tname := \"demo\"\n\t_ = name\n\treturn `\nserver:\n    host: localhost\n    port: 8080\n    tls:\n        cert: a.pem\n`\n}\n\nfunc other() {\n\tif true {\n\t\tprintln(\"x\")\n\t}\n}\n"

// TestMixedIndentation covers a file that mixes tab and space indentation
// (issue 21.23): re-indentation is decided line by line, so a hunk whose
// tabs were written as spaces keeps the raw string's own spaces.
func TestMixedIndentation(t *testing.T) {
	tests := []struct{ name, diff, want string }{
		{name: "added line inside the raw string, tabs written as 4 spaces",
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n     _ = name\n     return `\n server:\n     host: localhost\n+    timeout: 30s\n     port: 8080\n",
			want: strings.Replace(goRaw, "    host: localhost\n", "    host: localhost\n    timeout: 30s\n", 1)},
		{name: "added lines in code and in the raw string",
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n     name := \"demo\"\n+    name += \"!\"\n     _ = name\n     return `\n server:\n     host: localhost\n+    timeout: 30s\n     port: 8080\n",
			want: strings.Replace(strings.Replace(goRaw, "    host: localhost\n", "    host: localhost\n    timeout: 30s\n", 1), "\tname := \"demo\"\n", "\tname := \"demo\"\n\tname += \"!\"\n", 1)},
		{name: "nested raw-string line, tabs written as 8 spaces",
			diff: "--- a/demo.go\n+++ b/demo.go\n@@\n         println(\"x\")\n@@\n     tls:\n-        cert: a.pem\n+        cert: b.pem\n+        key: b.key\n `\n }\n",
			want: strings.Replace(goRaw, "        cert: a.pem\n", "        cert: b.pem\n        key: b.key\n", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := workspace(t, map[string]string{"demo.go": goRaw})
			changes, err := patch.Apply(d, tc.diff, patch.Options{})
			if err != nil {
				t.Fatalf("refused:\n%s", patch.Feedback(err))
			}
			if len(changes) != 1 || changes[0].After != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", changes[0].After, tc.want)
			}
		})
	}
}

// TestChangedTargetLookAlikeAtOtherDepth: the block a hunk targets was
// changed since (one of its lines), and a look-alike of it sits two
// spaces shallower elsewhere. The hunk matches there only re-indented and
// nearly as written at its target: it is refused, not applied to the
// look-alike.
func TestChangedTargetLookAlikeAtOtherDepth(t *testing.T) {
	const file = "function a (fd) {\n" +
		"  try {\n" +
		"    fs.closeSync(fd)\n" +
		"  } catch (er) {}\n" +
		"  } else {\n" +
		"    fs.closeSync(fd)\n" +
		"  }\n" +
		"  return ret\n" +
		"}\n" +
		"\n" +
		"function b (fd) {\n" +
		"  if (x) {\n" +
		"    try {\n" +
		"      fs.closeSync(fd)\n" +
		"    } catch (er) {}\n" +
		"    } else {\n" +
		"      fs.closeSync(fd)\n" +
		"    } // edited by the user\n" +
		"    return ret\n" +
		"  }\n" +
		"}\n"
	// Written against function b before the user's edit.
	diff := "--- a/x.js\n+++ b/x.js\n@@\n     } catch (er) {}\n     } else {\n       fs.closeSync(fd)\n-    }\n+    } // reviewed\n     return ret\n"
	d := workspace(t, map[string]string{"x.js": file})
	changes, err := patch.Apply(d, diff, patch.Options{})
	if !errors.Is(err, patch.ErrAmbiguous) || changes != nil {
		t.Fatalf("got %v, %v; want a refusal (ErrAmbiguous)", changes, err)
	}
}

// TestChangedTargetNamedByHeader: a thin hunk whose removed line was
// changed at the place its header names, while a look-alike elsewhere
// still matches exactly, is refused: the header never chooses a place, but
// here it shows the match is not the one meant.
func TestChangedTargetNamedByHeader(t *testing.T) {
	block := func(t string) string {
		return "struct it" + t + " {\n  using difference_type = std::ptrdiff_t;\n  using pointer = value_type *;\n  using reference = value_type &;\n};\n\n"
	}
	file := block("A") + block("B") + block("C") + block("D")
	// The user changed block D's pointer line; the model's hunk, written
	// against block D (line 20), removes it.
	file = strings.Replace(file, "struct itD {\n  using difference_type = std::ptrdiff_t;\n  using pointer = value_type *;", "struct itD {\n  using difference_type = std::ptrdiff_t;\n  using pointer = value_type *; // raw", 1)
	diff := "--- a/x.h\n+++ b/x.h\n@@ -20,3 +20,2 @@\n-  using difference_type = std::ptrdiff_t;\n-  using pointer = value_type *;\n   using reference = value_type &;\n"
	// Blocks A, B and C hold the lines too: make A and B differ so that
	// only C matches.
	file = strings.Replace(file, "struct itA {\n  using difference_type = std::ptrdiff_t;", "struct itA {\n  using difference_type = long;", 1)
	file = strings.Replace(file, "struct itB {\n  using difference_type = std::ptrdiff_t;", "struct itB {\n  using difference_type = int;", 1)
	d := workspace(t, map[string]string{"x.h": file})
	changes, err := patch.Apply(d, diff, patch.Options{})
	if !errors.Is(err, patch.ErrAmbiguous) || changes != nil {
		t.Fatalf("got %v, %v; want a refusal (ErrAmbiguous)", changes, err)
	}
	// Without the user's change, the header's place matches: applied there.
	clean := strings.Replace(file, "value_type *; // raw", "value_type *;", 1)
	d = workspace(t, map[string]string{"x.h": clean})
	if _, err := patch.Apply(d, diff, patch.Options{}); !errors.Is(err, patch.ErrAmbiguous) {
		// Blocks C and D both match: ambiguous whatever the header says.
		t.Fatalf("two exact places: got %v, want ErrAmbiguous", err)
	}
}

// TestOneLineHunkFarFromItsHeader: a hunk whose only non-blank old line
// occurs once, far from the line its header names, is refused: the line
// it was meant for may be the one the user changed since (the corpus case
// from npm's undici, where "this.factory = null" stood twice). Near the
// header the same hunk applies.
func TestOneLineHunkFarFromItsHeader(t *testing.T) {
	filler := strings.Repeat("  step()\n", 40)
	file := "function a () {\n  this.factory = null // edited by the user\n\n" + filler + "}\n\nfunction b () {\n  this.factory = null\n\n  return\n}\n"
	far := "--- a/x.js\n+++ b/x.js\n@@ -2,2 +2,2 @@\n-  this.factory = null\n+  this.factoryAlt = null\n \n"
	d := workspace(t, map[string]string{"x.js": file})
	changes, err := patch.Apply(d, far, patch.Options{})
	if !errors.Is(err, patch.ErrAmbiguous) || changes != nil {
		t.Fatalf("far from its header: got %v, %v; want a refusal (ErrAmbiguous)", changes, err)
	}
	at := strings.Count(file[:strings.LastIndex(file, "  this.factory = null\n")], "\n") + 1
	near := strings.Replace(far, "@@ -2,2 +2,2 @@", fmt.Sprintf("@@ -%d,2 +%d,2 @@", at, at), 1)
	changes, err = patch.Apply(d, near, patch.Options{})
	if err != nil || len(changes) != 1 || !strings.Contains(changes[0].After, "function b () {\n  this.factoryAlt = null\n") {
		t.Fatalf("at its header: got %+v, %v; want it applied in function b", changes, err)
	}
}
