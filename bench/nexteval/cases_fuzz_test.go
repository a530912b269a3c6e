package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCaseSet: a case set read with -cases is outside input; whatever it
// holds, reading its cases gives texts or an error, never a panic, and a
// case that reads makes texts that its hunks account for.
func FuzzCaseSet(f *testing.F) {
	f.Add(`{"files":[{"text":"a\nb\nc\n"}],"cases":[{"file":0,"user":{"line":1,"del":1,"add":["B"]},"next":{"line":2,"del":1,"add":["C","D"]}}]}`)
	f.Add(`{"files":[{"text":"a\nb\n"}],"cases":[{"file":0,"user":{"line":1,"del":1,"add":[]}}]}`)
	f.Add(`{"files":[{"text":"a\nb\nc\n"}],"cases":[{"file":0,"user":{"line":2,"del":1,"add":["x"]},"next":{"line":0,"del":0,"add":["y"]}}]}`)
	f.Add(`{"files":[],"cases":[{"file":-1,"user":{"line":-3,"del":-1}}]}`)
	f.Fuzz(func(t *testing.T, data string) {
		var s CaseSet
		if json.Unmarshal([]byte(data), &s) != nil {
			return
		}
		for _, c := range s.Cases {
			tx, err := s.textsOf(c)
			if err != nil {
				continue
			}
			base := strings.Count(tx.base, "\n")
			if got, want := strings.Count(tx.doc, "\n"), base-c.User.Del+len(c.User.Add); strings.HasSuffix(tx.base, "\n") && got != want {
				t.Fatalf("the user's hunk -%d +%d turns %d lines into %d", c.User.Del, len(c.User.Add), base, got)
			}
			if tx.follows != (c.Next != nil) {
				t.Fatalf("case %+v: follows %v", c, tx.follows)
			}
		}
	})
}
