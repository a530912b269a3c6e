package lsp

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"testing"
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
