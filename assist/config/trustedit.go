package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// ErrTrustByHand: the user file sets trust.folders in a form
// EditTrustFolders does not rewrite (an inline table, a dotted key in
// another table); the user edits it by hand.
var ErrTrustByHand = errors.New("the file sets trust.folders in a form kimi-lsp trust does not rewrite: edit it by hand")

// EditTrustFolders returns the user file's text with trust.folders set to
// folders, everything else as it was (comments and layout included): the
// `folders = […]` assignment of its [trust] table is replaced in place, or
// added below a [trust] header, or a [trust] table is appended. The result
// is checked by decoding both texts: every other value must be the same,
// or nothing is returned but an error. A file whose keys are all in a
// [kimi] table gets [kimi.trust].
func EditTrustFolders(text []byte, folders []string) ([]byte, error) {
	var before map[string]any
	if _, err := toml.Decode(string(text), &before); err != nil {
		return nil, fmt.Errorf("the file is not valid TOML, so it is left as it is: %s", tomlError(text, err))
	}
	table := "trust"
	if k, ok := before["kimi"].(map[string]any); ok && len(before) == 1 && len(k) > 0 {
		table = "kimi.trust"
	}
	line := "folders = " + tomlList(folders)
	src := string(text)
	var out string
	switch start, end, found := assignment(src, table); {
	case found:
		out = src[:start] + line + src[end:]
	case start >= 0:
		out = src[:start] + line + "\n" + src[start:]
	default:
		if hasTrustValue(before, table) {
			return nil, ErrTrustByHand
		}
		sep := ""
		if src != "" && !strings.HasSuffix(src, "\n") {
			sep = "\n"
		}
		if src != "" {
			sep += "\n"
		}
		out = src + sep + "# Folders you trust (kimi-lsp trust DIR and kimi-lsp untrust DIR edit this list).\n[" + table + "]\n" + line + "\n"
	}
	var after map[string]any
	if _, err := toml.Decode(out, &after); err != nil {
		return nil, ErrTrustByHand
	}
	got := trustValue(after, table)
	if !reflect.DeepEqual(got, stringsAsAny(folders)) {
		return nil, ErrTrustByHand
	}
	dropTrustValue(before, table)
	dropTrustValue(after, table)
	if !reflect.DeepEqual(before, after) {
		return nil, ErrTrustByHand
	}
	return []byte(out), nil
}

// tomlList writes a list of strings as a one-line TOML array.
func tomlList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tableHeader and foldersKey are compiled on first use, not at start, as
// the configuration's other patterns.
var (
	tableHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[ \t]*\[[ \t]*([A-Za-z0-9_.\- \t"]+?)[ \t]*\][ \t]*(#.*)?$`)
	})
	foldersKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*"?folders"?[ \t]*=`) })
)

// assignment finds, in the table named table, the `folders = […]` line(s):
// found with the byte span from the key to the array's end. Without it,
// start is where a line may be inserted below the table's header (-1 when
// the file has no such header).
func assignment(src, table string) (start, end int, found bool) {
	start = -1
	in := false
	for off := 0; off < len(src); {
		nl := strings.IndexByte(src[off:], '\n')
		lineEnd := len(src)
		if nl >= 0 {
			lineEnd = off + nl
		}
		l := src[off:lineEnd]
		if m := tableHeader().FindStringSubmatch(l); m != nil && !strings.HasPrefix(strings.TrimSpace(l), "[[") {
			name := strings.ReplaceAll(strings.ReplaceAll(m[1], " ", ""), `"`, "")
			in = name == table
			if in && start < 0 {
				start = min(lineEnd+1, len(src))
			}
		} else if in && foldersKey().MatchString(l) {
			k := off + len(l) - len(strings.TrimLeft(l, " \t"))
			if e, ok := arrayEnd(src, off+strings.IndexByte(l, '=')+1); ok {
				return k, e, true
			}
			return -1, -1, false
		}
		off = lineEnd + 1
	}
	return start, -1, false
}

// arrayEnd returns the offset after the TOML array that starts at or after
// i (after spaces), skipping strings and comments.
func arrayEnd(src string, i int) (int, bool) {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i >= len(src) || src[i] != '[' {
		return 0, false
	}
	depth := 0
	for ; i < len(src); i++ {
		switch c := src[i]; c {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case '"', '\'':
			for i++; i < len(src) && src[i] != c; i++ {
				if c == '"' && src[i] == '\\' {
					i++
				}
			}
		}
	}
	return 0, false
}

func hasTrustValue(m map[string]any, table string) bool { return trustValue(m, table) != nil }

// trustValue is the decoded value of table.folders, nil if none.
func trustValue(m map[string]any, table string) any {
	var cur any = m
	for _, k := range strings.Split(table, ".") {
		t, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = t[k]
	}
	t, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	return t["folders"]
}

// dropTrustValue removes table.folders and the tables it leaves empty, so
// two decodings compare equal but for it.
func dropTrustValue(m map[string]any, table string) {
	keys := strings.Split(table, ".")
	var walk func(t map[string]any, i int)
	walk = func(t map[string]any, i int) {
		if i == len(keys) {
			delete(t, "folders")
			return
		}
		sub, ok := t[keys[i]].(map[string]any)
		if !ok {
			return
		}
		walk(sub, i+1)
		if len(sub) == 0 {
			delete(t, keys[i])
		}
	}
	walk(m, 0)
}

func stringsAsAny(l []string) any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
