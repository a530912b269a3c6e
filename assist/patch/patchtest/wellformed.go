package patchtest

import (
	"bytes"
	"fmt"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/sourcegraph/go-diff/diff"
)

// WellFormed parses text, a diff package patch wrote (patch.Unified), with
// github.com/sourcegraph/go-diff — an independent parser that git-based
// tools share — and checks every hunk's header counts against its body:
// a strict reader must accept the diffs kimi-lsp hands to other tools
// (kimi-lsp edit's output, meant for git apply or patch) as they are.
// (For reading model-written diffs package patch has its own parser,
// because go-diff accepts wrong counts and truncated hunks silently —
// exactly what WellFormed checks after it.) It returns the files and hunks
// read; its errors wrap patch.ErrParse.
//
// It is a test oracle only. kimi-lsp edit ran it on every diff it printed
// until issue 31, when it had caught nothing: not one of the 622 diffs of
// the cases bench/patchbench applies on its two seeds (go run
// ./bench/patchbench -crosscheck; bench/README.md), nor of the inputs
// FuzzUnifiedWellFormed and FuzzApply explore. patch's tests,
// FuzzUnifiedWellFormed and patchbench -crosscheck hold Unified to it.
func WellFormed(text string) (files, hunks int, err error) {
	fds, err := diff.ParseMultiFileDiff([]byte(text))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", patch.ErrParse, err)
	}
	if len(fds) == 0 && text != "" {
		return 0, 0, fmt.Errorf("%w: no file diff found", patch.ErrParse)
	}
	for _, f := range fds {
		for i, h := range f.Hunks {
			hunks++
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
					return 0, 0, fmt.Errorf("%w: %s hunk %d: line without a marker: %q", patch.ErrParse, f.NewName, i+1, line)
				}
			}
			if orig != h.OrigLines || nw != h.NewLines {
				return 0, 0, fmt.Errorf("%w: %s hunk %d: header says -%d +%d, body has -%d +%d", patch.ErrParse, f.NewName, i+1, h.OrigLines, h.NewLines, orig, nw)
			}
		}
	}
	return len(fds), hunks, nil
}
