package lsp

import (
	"encoding/json"
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"testing"

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
