package cachetest

import "unicode/utf8"

// Tokenizer limits: a run longer than its limit is split into several tokens.
const (
	// MaxWordBytes bounds a run of ASCII letters, digits and underscores
	// (not counting the one leading space a word token may carry).
	MaxWordBytes = 6
	// MaxSpaceBytes bounds a run of ASCII white space.
	MaxSpaceBytes = 8
	// MaxPunctBytes bounds a run of other ASCII bytes (operators, brackets).
	MaxPunctBytes = 2
)

// Token is one token of a byte string: the half-open byte range [Start, End).
type Token struct {
	Start, End int
}

const (
	classOther = iota // ASCII punctuation and control bytes
	classWord
	classSpace
	classHigh // the first byte of a non-ASCII rune, or an invalid byte
)

var classes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classHigh
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
			t[c] = classWord
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			t[c] = classSpace
		}
	}
	return t
}()

var limits = [...]int{classOther: MaxPunctBytes, classWord: MaxWordBytes, classSpace: MaxSpaceBytes}

// text is the byte sequence types the tokenizer reads.
type text interface{ ~[]byte | ~string }

// next returns the end of the token that starts at b[i] (i < len(b)).
func next[T text](b T, i int) int {
	c := b[i]
	k := classes[c]
	switch {
	case k == classHigh:
		var size int
		switch s := any(b).(type) {
		case []byte:
			_, size = utf8.DecodeRune(s[i:])
		case string:
			_, size = utf8.DecodeRuneInString(s[i:])
		}
		return i + size // an invalid byte decodes with size 1
	case c == ' ' && i+1 < len(b) && classes[b[i+1]] == classWord:
		// A single space before a word belongs to the word, as in BPE
		// vocabularies (" return").
		i++
		k = classWord
	}
	j, end := i+1, i+limits[k]
	if end > len(b) {
		end = len(b)
	}
	for j < end && classes[b[j]] == k {
		j++
	}
	return j
}

// Tokenize splits b into tokens, left to right: a run of ASCII letters, digits
// and underscores is a token of at most MaxWordBytes bytes, plus the single
// space before it if there is one; a run of other ASCII white space is a
// token of at most MaxSpaceBytes bytes; a run of other ASCII bytes
// (punctuation) is a token of at most MaxPunctBytes bytes; every non-ASCII
// rune (an invalid byte counts as one) is a token of its own. The tokens
// cover b exactly, in order.
func Tokenize(b []byte) []Token {
	toks := make([]Token, 0, len(b)/3+1)
	for i := 0; i < len(b); {
		j := next(b, i)
		toks = append(toks, Token{Start: i, End: j})
		i = j
	}
	return toks
}

// AppendBoundaries appends to dst the end offset of every token of b, in
// order, and returns the extended slice. It is Tokenize without the start
// offsets (each token starts where the previous one ended, the first at 0).
func AppendBoundaries(dst []int, b []byte) []int {
	for i := 0; i < len(b); {
		i = next(b, i)
		dst = append(dst, i)
	}
	return dst
}

// Count returns the number of tokens of b, as Tokenize would return them.
func Count(b []byte) int {
	n := 0
	for i := 0; i < len(b); n++ {
		i = next(b, i)
	}
	return n
}

// CountString is Count for a string.
func CountString(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i = next(s, i)
	}
	return n
}
