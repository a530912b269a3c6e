package workspace

import "fmt"

// Encoding is the unit in which a Position's Character counts: the position
// encoding negotiated with the client (LSP 3.17 general.positionEncodings).
type Encoding uint8

const (
	// UTF16 counts UTF-16 code units, the LSP default.
	UTF16 Encoding = iota
	// UTF8 counts bytes.
	UTF8
	// UTF32 counts Unicode code points.
	UTF32
)

// String returns the encoding's LSP name ("utf-16", "utf-8", "utf-32").
func (e Encoding) String() string {
	switch e {
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	default:
		return "utf-16"
	}
}

// Position is a zero-based line and a column counted in some Encoding. It
// mirrors the LSP Position; the lsp package converts at the edge.
type Position struct {
	Line      uint32
	Character uint32
}

// Range is a half-open range of Positions.
type Range struct {
	Start, End Position
}

// String formats a range as "line:col-line:col", one-based, for messages.
func (r Range) String() string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line+1, r.Start.Character+1, r.End.Line+1, r.End.Character+1)
}
