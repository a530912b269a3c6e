package ignore

import "unicode/utf8"

// sniffLen is how much of a file LooksBinary examines, as git does.
const sniffLen = 8000

// LooksBinary reports whether data (the start of a file is enough) is not
// text: it holds a NUL byte in its first 8000 bytes, or most of those bytes
// are not part of valid UTF-8 sequences. A rune cut at the end of the sample
// does not count as invalid.
func LooksBinary(data []byte) bool {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	invalid := 0
	for i := 0; i < len(data); {
		b := data[i]
		if b == 0 {
			return true
		}
		if b < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(data[i:]) {
				break // cut by the sample
			}
			invalid++
			i++
			continue
		}
		i += size
	}
	return len(data) > 0 && invalid*2 > len(data)
}
