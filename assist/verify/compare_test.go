package verify

import (
	"slices"
	"testing"
)

func diag(line uint32, msg string) wireDiagnostic {
	return wireDiagnostic{Range: wireRange{Start: wirePosition{Line: line}}, Severity: severityError, Message: msg}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		old, now      []wireDiagnostic
		want          []string
	}{
		{"unchanged error", "a\nb\n", "a\nb\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(1, "e")}, nil},
		{"moved down by an insertion above", "a\nb\n", "x\ny\na\nb\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(3, "e")}, nil},
		{"same message on another line is new", "a\nb\nc\n", "a\nb\nc\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "e"), diag(2, "e")}, []string{"e@2"}},
		{"a different message is new", "a\n", "a\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "f")}, []string{"f@0"}},
		{"error on a rewritten line keeps its message", "a\nb\nc\n", "a\nB1\nB2\nc\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(2, "e")}, nil},
		{"warnings never count", "a\n", "a\n", nil, []wireDiagnostic{{Severity: 2, Message: "w"}}, nil},
		{"no severity counts as an error", "a\n", "a\n", nil, []wireDiagnostic{{Message: "s"}}, []string{"s@0"}},
		{"each old error matches once", "a\n", "a\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "e"), diag(0, "e")}, []string{"e@0"}},
		{"deleted line: its error may stay on the line before", "a\nb\nc\n", "a\nc\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(0, "e")}, nil},
		{"fixed error, nothing new", "a\nb\n", "a\nB\n", []wireDiagnostic{diag(1, "e")}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range newErrors(tc.before, tc.after, tc.old, tc.now) {
				got = append(got, d.Message+"@"+string(rune('0'+d.Range.Start.Line)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMapLinesPastTheEnd(t *testing.T) {
	m := mapLines("a\nb\n", "z\na\nb\n")
	if lo, hi := m.at(5); lo != 6 || hi != 7 {
		t.Errorf("line 5 of a 3-line text grown by one: got [%d,%d), want [6,7)", lo, hi)
	}
}
