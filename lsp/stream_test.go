package lsp

import (
	"encoding/json"
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"go.lsp.dev/jsonrpc2"
)

// smallExp matches JSON numbers whose exponent big.Rat can expand cheaply.
var smallExp = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,2})?$`)

// FuzzCanonicalNumber: two JSON numbers get the same canonical spelling
// exactly when they are the same number, and the int32 reading is the
// number's value.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range [][2]string{
		{"7", "7.0"}, {"1000", "1e3"}, {"0.5", "5e-1"}, {"-0", "0"}, {"4294967296", "4.294967296e9"},
		{"9007199254740993", "9007199254740992"}, {"2147483647", "2147483648"}, {"-2147483648", "-2.147483648e9"},
		{"1e999999999999999999", "1"}, {"01", "1"}, {"1.", "1"}, {"1e", "1"}, {"-", "0"}, {"0.000e5", "0"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ca, va, ia, oka := canonicalNumber(a)
		cb, _, _, okb := canonicalNumber(b)
		if oka != json.Valid([]byte(a)) && smallExp.MatchString(a) {
			t.Fatalf("canonicalNumber(%q) ok = %v", a, oka)
		}
		if oka && !json.Valid([]byte(a)) {
			t.Fatalf("canonicalNumber(%q) accepts text that is not JSON", a)
		}
		if !oka || !okb || !smallExp.MatchString(a) || !smallExp.MatchString(b) {
			return
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if (ca == cb) != (ra.Cmp(rb) == 0) {
			t.Fatalf("%q → %q, %q → %q, but equal numbers: %v", a, ca, b, cb, ra.Cmp(rb) == 0)
		}
		if ia != (ra.IsInt() && ra.Num().IsInt64() && ra.Num().Int64() == int64(int32(ra.Num().Int64()))) {
			t.Fatalf("%q: int32 = %v", a, ia)
		}
		if ia && strconv.Itoa(int(va)) != ra.Num().String() {
			t.Fatalf("%q: value %d, want %s", a, va, ra.Num())
		}
	})
}

func TestEncodeResponse(t *testing.T) {
	resp := func(result any, err error) *jsonrpc2.Response {
		r, e := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), result, err)
		if e != nil {
			t.Fatal(e)
		}
		return r
	}
	tests := []struct {
		id   string
		resp *jsonrpc2.Response
		want string
	}{
		{`7`, resp(map[string]int{"a": 1}, nil), `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`},
		{`7.0`, resp(nil, nil), `{"jsonrpc":"2.0","id":7.0,"result":null}`},
		{`"x\u0079"`, resp(json.RawMessage(`[1]`), nil), `{"jsonrpc":"2.0","id":"x\u0079","result":[1]}`},
		{`4294967296`, resp(nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "bad %s", "thing")),
			`{"jsonrpc":"2.0","id":4294967296,"error":{"code":-32602,"message":"bad thing"}}`},
		// A plain error is an internal error, never code 0
		// (docs/protocol-pitfalls.md, "Plain errors go out with code 0").
		{`2`, resp(nil, errors.New("boom")), `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`},
	}
	for _, tt := range tests {
		got, err := encodeResponse(json.RawMessage(tt.id), tt.resp)
		if err != nil || string(got) != tt.want {
			t.Errorf("encodeResponse(%s) = %s, %v; want %s", tt.id, got, err, tt.want)
		}
	}
}

// rawRequest is a request frame body written by hand, so the id reaches the
// server exactly as spelled; pad adds a params field of that many bytes
// (to push the frame over the sizes at which the reader changes path).
func rawRequest(id, method string, params string, pad int) []byte {
	if params == "" {
		params = "null"
	}
	if pad > 0 {
		params = `{"value":` + params + `,"pad":"` + strings.Repeat("x", pad) + `"}`
	}
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
}

// replies returns the responses received so far whose raw id is id.
func replies(ed *lsptest.Editor, id string) []*lsptest.Message {
	var out []*lsptest.Message
	for _, m := range ed.Messages() {
		if m.IsResponse() && string(m.ID) == id {
			out = append(out, m)
		}
	}
	return out
}

// TestIDsDistinctByType: ids of different type are different requests
// (string "" and number 0, "7" and 7): each gets exactly one reply, and a
// cancel of one leaves the other running (#21.11). The library's id type
// cannot tell "" from 0.
func TestIDsDistinctByType(t *testing.T) {
	// (The third pair is a string spelled as the stand-in the server uses
	// for a number beyond int32.)
	standIn, _ := json.Marshal(bigIDPrefix + "2147483648e10")
	for _, pair := range [][2]string{
		{`0`, `""`}, {`""`, `0`}, {`7`, `"7"`}, {`"7"`, `7`},
		{`2147483648`, string(standIn)}, {string(standIn), `2147483648`},
	} {
		t.Run(pair[0]+"_"+pair[1], func(t *testing.T) {
			started := make(chan string, 2)
			release := make(chan struct{})
			s := newSession(t, slowMethod(started, release))
			s.initialize(nil)
			ctx := ctxT(t)
			for _, id := range pair {
				if err := s.ed.WriteFrame(rawRequest(id, "test/slow", `"x"`, 0)); err != nil {
					t.Fatal(err)
				}
			}
			<-started
			<-started
			// Cancel the second: it alone is answered,
			// cancelled; the first keeps running until released.
			s.ed.WriteFrame([]byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + pair[1] + `}}`))
			m, err := s.ed.Wait(ctx, func(m *lsptest.Message) bool { return m.IsResponse() && string(m.ID) == pair[1] })
			if err != nil {
				t.Fatalf("no reply for id %s: %v", pair[1], err)
			}
			if m.Error == nil || m.Error.Code != int64(RequestCancelled) {
				t.Errorf("reply to %s = %+v, want cancelled", pair[1], m)
			}
			if got := replies(s.ed, pair[0]); len(got) != 0 {
				t.Fatalf("cancelling %s answered %s: %+v", pair[1], pair[0], got[0])
			}
			close(release)
			m, err = s.ed.Wait(ctx, func(m *lsptest.Message) bool { return m.IsResponse() && string(m.ID) == pair[0] })
			if err != nil {
				t.Fatalf("no reply for id %s: %v", pair[0], err)
			}
			if m.Error != nil || string(m.Result) != `"released"` {
				t.Errorf("reply to %s = %s %+v, want \"released\"", pair[0], m.Result, m.Error)
			}
			// A round trip after both: no second reply came for either.
			if err := s.ed.Call(ctx, "no/such", nil, nil); errCode(err) != -32601 {
				t.Fatalf("no/such: %v", err)
			}
			for _, id := range pair {
				if n := len(replies(s.ed, id)); n != 1 {
					t.Errorf("id %s: %d replies, want 1", id, n)
				}
			}
		})
	}
}

// TestReplyIDExactAnySize: every reply carries its request's id byte for
// byte, whatever the frame size: small frames, frames from 32 KiB (which
// the reader decodes by another path) and beyond the exact-buffer size
// (#21.11). An id with a lone surrogate came back from a large frame as
// "\ufffdx", and "" as 0.
func TestReplyIDExactAnySize(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	ctx := ctxT(t)
	ids := []string{`"\ud800x"`, `""`, `"\u0041"`, `"a\/b"`, `7.0`, `1e3`, `-0`, `4294967296`, `"é"`, `-5`}
	editorID := regexp.MustCompile(`^[1-9][0-9]?$`) // lsptest's own calls (fewer than 100)
	for round, size := range []int{0, libraryDecodeMin, exactBodyMax + 10} {
		for _, id := range ids {
			if err := s.ed.WriteFrame(rawRequest(id, "no/such", "1", size)); err != nil {
				t.Fatal(err)
			}
			n := 0
			m, err := s.ed.Wait(ctx, func(m *lsptest.Message) bool {
				if m.IsResponse() && string(m.ID) == id {
					n++
				}
				return n == round+1
			})
			if err != nil {
				t.Fatalf("frame of %d+ bytes, id %s: no reply with that id: %v", size, id, err)
			}
			if m.Error == nil || m.Error.Code != -32601 {
				t.Errorf("frame of %d+ bytes, id %s: reply %+v, want method not found", size, id, m.Error)
			}
		}
	}
	// A round trip of our own, then: every reply was addressed to an id
	// sent, once per frame.
	if err := s.ed.Call(ctx, "no/such", nil, nil); errCode(err) != -32601 {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, m := range s.ed.Messages() {
		if m.IsResponse() && !editorID.Match(m.ID) {
			count[string(m.ID)]++
		}
	}
	for _, id := range ids {
		if count[id] != 3 {
			t.Errorf("id %s: %d replies, want 3", id, count[id])
		}
		delete(count, id)
	}
	for id, n := range count {
		t.Errorf("%d replies with id %s, which no request had", n, id)
	}
}

// TestCanonicalID: ids are one request exactly when they are the same JSON
// value (#21.11).
func TestCanonicalID(t *testing.T) {
	standIn, _ := json.Marshal(bigIDPrefix + "2147483648e10")
	strStandIn, _ := json.Marshal(stringIDPrefix)
	same := [][2]string{
		{`"A"`, `"\u0041"`}, {`"a/b"`, `"a\/b"`}, {`"\ud83d\ude00"`, `"😀"`}, {`"\\"`, `"\u005c"`},
		{`7`, `7.0`}, {`1000`, `1e3`}, {`0`, `-0`}, {`"\ud800x"`, `"\uD800x"`}, {`""`, `""`},
	}
	distinct := [][2]string{
		{`""`, `0`}, {`"1"`, `1`}, {`"0"`, `0`}, {`"\ud800x"`, `"\ufffdx"`}, {`"\ud800x"`, `"\udbffx"`},
		{"\"\xff\"", `"\ufffd"`}, {"\"\xff\"", "\"\xfe\""}, {`"\ud800"`, `"\\ud800"`},
		{`"\u005cxff\ud800"`, "\"\xff\\ud800\""}, {`2147483648`, string(standIn)}, {`""`, string(strStandIn)},
		{`"\ud83d"`, `"\ude00"`}, {`"\ud83d\ud83d"`, `"\ud83d"`},
	}
	key := func(raw string) jsonrpc2.ID {
		t.Helper()
		id, err := canonicalID(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("canonicalID(%s): %v", raw, err)
		}
		return id
	}
	for _, p := range same {
		if a, b := key(p[0]), key(p[1]); a != b {
			t.Errorf("%s and %s are one id, got %q and %q", p[0], p[1], a, b)
		}
	}
	for _, p := range distinct {
		if a, b := key(p[0]), key(p[1]); a == b {
			t.Errorf("%s and %s are two ids, both got %q", p[0], p[1], a)
		}
	}
	for _, bad := range []string{`"`, `"a`, "\"\n\"", `"\x"`, `"\u12"`, `"\u12g4"`, `"a"b"`, `[1]`, `null`, `true`, `1.`, `"\"`} {
		if id, err := canonicalID(json.RawMessage(bad)); err == nil {
			t.Errorf("canonicalID(%s) = %q, want an error", bad, id)
		}
	}
}

// FuzzCanonicalID: two valid ids get one jsonrpc2.ID only when they have
// the same type and value, and always when they do (for strings Go decodes
// faithfully: valid UTF-8 without surrogate escapes).
func FuzzCanonicalID(f *testing.F) {
	for _, s := range [][2]string{
		{`""`, `0`}, {`"A"`, `"\u0041"`}, {`"\ud800x"`, `"\ufffdx"`}, {"\"\xff\"", `"\ufffd"`},
		{`"\u2063kimi-lsp-number-id:1e10"`, `1e10`}, {`"\\u0041"`, `"A"`}, {`7`, `"7"`},
	} {
		f.Add(s[0], s[1])
	}
	surrogate := regexp.MustCompile(`\\u[dD][89a-fA-F]`)
	faithful := func(s string) bool { return utf8.ValidString(s) && !surrogate.MatchString(s) }
	f.Fuzz(func(t *testing.T, a, b string) {
		ia, erra := canonicalID(json.RawMessage(a))
		ib, errb := canonicalID(json.RawMessage(b))
		for _, c := range []struct {
			raw string
			err error
		}{{a, erra}, {b, errb}} {
			var v any
			valid := json.Unmarshal([]byte(c.raw), &v) == nil
			_, isStr := v.(string)
			_, isNum := v.(float64)
			if c.err == nil && !(valid && (isStr || isNum)) {
				t.Fatalf("canonicalID(%q) accepts what is not a JSON string or number", c.raw)
			}
			if c.err != nil && valid && isStr {
				t.Fatalf("canonicalID(%q): %v", c.raw, c.err)
			}
		}
		if erra != nil || errb != nil {
			return
		}
		var va, vb any
		json.Unmarshal([]byte(a), &va)
		json.Unmarshal([]byte(b), &vb)
		sa, aStr := va.(string)
		sb, bStr := vb.(string)
		switch {
		case aStr != bStr:
			if ia == ib {
				t.Fatalf("%q (string %v) and %q are one id %q", a, aStr, b, ia)
			}
		case aStr:
			if ia == ib && sa != sb {
				t.Fatalf("%q and %q differ but are one id %q", a, b, ia)
			}
			if faithful(a) && faithful(b) && (ia == ib) != (sa == sb) {
				t.Fatalf("%q and %q: one id %v, equal values %v", a, b, ia == ib, sa == sb)
			}
		}
	})
}
