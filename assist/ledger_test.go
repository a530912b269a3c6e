package assist_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestBuildTaskTakesWhatIsCached (#25.3): after an action on a.go, whose
// prompt showed the files it uses, a task on b.go built by the engine fills
// its context with those files first (they are in the cached prefix),
// where the same task built without the engine's session takes its
// directory's files in their plain order.
func TestBuildTaskTakesWhatIsCached(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/m\n"}
	pad := strings.Repeat("// A comment that gives the file some weight in the prompt's budget.\n", 10)
	for i := range 10 {
		files[fmt.Sprintf("shop/f%d.go", i)] = fmt.Sprintf("package shop\n\n%s\n// F%d returns %d.\nfunc F%d() int { return %d }\n", pad, i, i, i, i)
	}
	files["shop/a.go"] = "package shop\n\nfunc A() int {\n\treturn F5() + F6() + F7() + F8() + F9()\n}\n"
	files["shop/b.go"] = "package shop\n\nfunc B() int {\n\treturn 1\n}\n"
	f := newFixture(t, files, modeltest.Rule{Match: `action="explain"`, Content: "ok"})
	f.cfg.Context.MaxTokens = 2000
	ctxFiles := func(task *assist.Task) []string {
		var out []string
		for _, d := range task.Context {
			out = append(out, d.Path)
		}
		slices.Sort(out)
		return out
	}
	first, err := f.engine.BuildTask(f.cfg, f.folders, f.request(config.ActionExplain, "shop/a.go", "\treturn", "F9()"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.engine.Run(context.Background(), *first, &recorder{}); err != nil {
		t.Fatal(err)
	}
	shown := ctxFiles(first)
	overlap := func(paths []string) int {
		n := 0
		for _, p := range paths {
			if slices.Contains(shown, p) {
				n++
			}
		}
		return n
	}
	r := f.request(config.ActionExplain, "shop/b.go", "\treturn", "1")
	plain, err := assist.BuildTask(f.cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	viaEngine, err := f.engine.BuildTask(f.cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a.go's prompt: %v\nb.go, plain: %v\nb.go, by the engine: %v", shown, ctxFiles(plain), ctxFiles(viaEngine))
	if got, base := overlap(ctxFiles(viaEngine)), overlap(ctxFiles(plain)); got <= base {
		t.Errorf("the engine's task shares %d files with the cached prompt, the plain one %d: want more", got, base)
	}
}
