package cache_test

import (
	"fmt"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

func ExampleSession() {
	s, err := cache.NewSession(cache.Config{BlockTokens: 16, MinCacheTokens: 16})
	if err != nil {
		panic(err)
	}
	doc := cache.Document{Path: "hello/main.go", Language: "go", Text: "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", LastEdited: 1}
	req := cache.Request{
		Project:     cache.Project{Name: "hello", Languages: []string{"go"}},
		Documents:   []cache.Document{doc},
		Active:      doc.Path,
		Selection:   cache.Selection{Start: 14, End: 27},
		Action:      "explain",
		Instruction: "Explain the selected code.",
		Now:         time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC),
	}
	first, _ := s.Build(req)
	s.Record(first.Handle, cache.Usage{PromptTokens: 700, CacheWriteTokens: 688})

	// The user types; the next request appends an edit block and keeps the
	// stable context byte for byte.
	req.Documents[0].Text = "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	req.Action, req.Instruction = "rewrite", "Use fmt."
	req.Now = req.Now.Add(time.Minute)
	second, _ := s.Build(req)
	fmt.Println(second.Messages[1].Content == first.Messages[1].Content)
	fmt.Println(second.DivergedIn, second.PredictedCachedTokens > 0)
	files, _ := cache.Reconstruct(second.Messages)
	fmt.Printf("%q\n", files["hello/main.go"])
	// Output:
	// true
	// edits true
	// "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
}
