package patch

import (
	"bytes"
	"fmt"

	"github.com/sourcegraph/go-diff/diff"
)

// CheckWellFormed parses text, a diff this package wrote (Unified), with
// github.com/sourcegraph/go-diff — an independent parser that git-based
// tools share — and checks every hunk's header counts against its body.
// It guards the diffs kimi-lsp hands to other tools (kimi-lsp edit's
// output, meant for git apply or patch): a strict reader must accept them
// as they are. (For reading model-written diffs this package has its own
// parser, because go-diff accepts wrong counts and truncated hunks
// silently — exactly what CheckWellFormed checks after it.)
func CheckWellFormed(text string) error {
	files, err := diff.ParseMultiFileDiff([]byte(text))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrParse, err)
	}
	if len(files) == 0 && text != "" {
		return fmt.Errorf("%w: no file diff found", ErrParse)
	}
	for _, f := range files {
		for i, h := range f.Hunks {
			var orig, nw int32
			for _, line := range bytes.SplitAfter(h.Body, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				switch line[0] {
				case ' ':
					orig++
					nw++
				case '-':
					orig++
				case '+':
					nw++
				case '\\':
				default:
					return fmt.Errorf("%w: %s hunk %d: line without a marker: %q", ErrParse, f.NewName, i+1, line)
				}
			}
			if orig != h.OrigLines || nw != h.NewLines {
				return fmt.Errorf("%w: %s hunk %d: header says -%d +%d, body has -%d +%d", ErrParse, f.NewName, i+1, h.OrigLines, h.NewLines, orig, nw)
			}
		}
	}
	return nil
}
