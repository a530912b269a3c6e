package config

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText makes text from outside — a repository's .kimi-lsp.toml, a
// model's answer, a file's name — safe to show on one line of a menu, a
// progress report, a message, a diagnostic or a terminal:
//
//   - an escape sequence goes as a whole, its introducer and its body:
//     ESC [ (or the C1 CSI, U+009B) with its parameter bytes (0x30–0x3F),
//     intermediate bytes (0x20–0x2F) and final byte (0x40–0x7E), so
//     "\x1b[31m" leaves no "[31m" behind; ESC ] P X ^ _ (or the C1 OSC,
//     DCS, SOS, PM, APC) with everything up to the string terminator (BEL,
//     ESC \ or U+009C) or the end of the text, so an OSC 8 hyperlink or a
//     window-title sequence leaves nothing; any other ESC with its
//     intermediate bytes and its one final byte (0x30–0x7E);
//   - format characters (Unicode category Cf: the bidirectional
//     embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
//     the marks U+200E, U+200F and U+061C, the zero-width characters
//     U+200B–U+200D and U+2060, the byte-order mark U+FEFF) are removed;
//   - every other control character (C0, DEL, C1) and every space
//     (newlines, U+2028) becomes one space; runs of spaces become one, and
//     the text is trimmed.
//
// Invalid UTF-8 becomes U+FFFD. CleanLines is the same for a text of
// several lines.
func CleanText(s string) string { return clean(s, false) }

// CleanLines is CleanText for a text shown on several lines (a review
// finding's explanation): newlines and tabs stay, and so do runs of
// spaces (indented code); CRLF and U+2028/U+2029 become newlines; every
// other control character is removed. The text is trimmed.
func CleanLines(s string) string { return clean(s, true) }

func cleanText(s string) string { return clean(s, false) }

// clean is CleanText, or with lines CleanLines.
func clean(s string, lines bool) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // a space is pending (one line only)
	put := func(r rune) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == 0x1b || r >= 0x80 && r <= 0x9f:
			body := seqLen(r, s[i:])
			i += body
			if r != 0x1b && body == 0 && !introducer(r) && !lines {
				space = true // a lone C1 control, as the C0 ones
			}
		case unicode.Is(unicode.Cf, r):
		case lines && (r == '\n' || r == '\t' || r == ' '):
			b.WriteRune(r)
		case lines && r == '\r':
			if i == len(s) || s[i] != '\n' {
				b.WriteByte('\n')
			}
		case lines && (r == '\u2028' || r == '\u2029'):
			b.WriteByte('\n')
		case lines && unicode.IsControl(r):
		case lines && unicode.IsSpace(r):
			b.WriteByte(' ')
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = true
		default:
			put(r)
		}
	}
	if lines {
		return strings.TrimSpace(b.String())
	}
	return b.String()
}

// introducer reports whether the C1 control r starts a sequence: CSI,
// OSC, DCS, SOS, PM or APC.
func introducer(r rune) bool {
	switch r {
	case 0x9b, 0x9d, 0x90, 0x98, 0x9e, 0x9f:
		return true
	}
	return false
}

// seqLen returns the length of the escape sequence's body that follows
// its introducer r (ESC or a C1 control) in rest.
func seqLen(r rune, rest string) int {
	switch r {
	case 0x9b:
		return csiLen(rest)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f:
		return stringLen(rest)
	case 0x1b:
	default:
		return 0
	}
	if rest == "" {
		return 0
	}
	switch rest[0] {
	case '[':
		return 1 + csiLen(rest[1:])
	case ']', 'P', 'X', '^', '_':
		return 1 + stringLen(rest[1:])
	}
	i := 0
	for i < len(rest) && rest[i] >= 0x20 && rest[i] <= 0x2f {
		i++
	}
	if i < len(rest) && rest[i] >= 0x30 && rest[i] <= 0x7e {
		i++
	}
	return i
}

// csiLen is the length of a control sequence's parameter, intermediate and
// final bytes.
func csiLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// stringLen is the length of a control string up to and including its
// terminator (BEL, ESC \ or U+009C), or all of s.
func stringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
	}
	return len(s)
}
