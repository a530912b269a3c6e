package workspace

import (
	"strings"
	"unicode/utf8"
)

// This file holds the text representation behind every Snapshot: a
// persistent (copy-on-write) B+tree of immutable string chunks, a rope.
//
// Leaves hold chunks of minLeaf..maxLeaf bytes (only a document smaller
// than that is a single shorter leaf, possibly empty); every internal node
// holds fanout/2..fanout children (only the root may hold fewer) and all
// leaves are at the same depth. Every node carries a summary of its subtree
// (bytes, line breaks, UTF-16 units, code points), which are additive, and
// keeps its kids' summaries inline next to their pointers, so a position is
// found by one descent that scans a few contiguous arrays:
// O(fanout·height + chunk), i.e. O(log n).
//
// An edit rebuilds only the one or two leaves it touches (plus at most one
// neighbour on each side, see below) and copies the nodes on the path from
// those leaves to the root; all other nodes are shared with the previous
// version. An old root therefore stays a valid, unchanged text: a Snapshot
// is just a root pointer. A keystroke costs O(chunk + fanout·height)
// whatever the size of the document.
//
// Seam invariant: a chunk boundary never falls inside a valid UTF-8
// sequence, nor between the '\r' and '\n' of a CRLF. So each chunk can be
// measured on its own (decoding a chunk alone gives the same runes as
// decoding the whole text there, and a '\r' that ends a chunk is a lone CR
// line break) and the summaries add up. An edit that would create a bad seam
// (an inserted "\n" right after a chunk ending in '\r', a deleted range that
// joins the halves of a multi-byte rune, …) absorbs the neighbouring chunk
// into the rebuilt region, which moves the seam to an old, unchanged one.
//
// Invalid UTF-8 is kept byte for byte: each byte that does not start a
// valid sequence decodes (as utf8.DecodeRuneInString does) to U+FFFD of
// width one byte, which is one UTF-16 unit and one code point.

// summary holds the additive measures of a piece of text.
type summary struct {
	bytes  int // length in bytes
	breaks int // line terminators: "\n", "\r\n" (one), lone "\r"
	u16    int // UTF-16 code units
	runes  int // code points
}

func (s summary) add(t summary) summary {
	return summary{s.bytes + t.bytes, s.breaks + t.breaks, s.u16 + t.u16, s.runes + t.runes}
}

func (s summary) sub(t summary) summary {
	return summary{s.bytes - t.bytes, s.breaks - t.breaks, s.u16 - t.u16, s.runes - t.runes}
}

// units returns the length in the code units of enc. Unknown encodings count
// as UTF-16, the LSP default.
func (s summary) units(enc Encoding) int {
	switch enc {
	case UTF8:
		return s.bytes
	case UTF32:
		return s.runes
	default:
		return s.u16
	}
}

// node is a rope node. A leaf (height 0) holds text; an internal node holds
// kids, all of height-1. Nodes are never modified once built.
type node struct {
	sum    summary
	height uint8
	ascii  bool // leaf: every byte is < 0x80
	cr     bool // leaf: contains '\r'
	text   string
	kids   []child
}

// child is a kid of an internal node with a copy of its summary, so that a
// descent scans one contiguous array instead of chasing every kid's pointer.
type child struct {
	sum summary
	n   *node
}

func childOf(n *node) child { return child{n.sum, n} }

// shape holds the tree's size parameters. Production uses defaultShape;
// tests use tiny shapes to build deep trees from short texts.
type shape struct {
	minLeaf, maxLeaf int // bytes per leaf; minLeaf ≥ 4
	target           int // leaf size when cutting a long text; 2·minLeaf+8 ≤ target ≤ maxLeaf-3
	fanout           int // maximum kids per internal node; ≥ 4
}

// defaultShape keeps a keystroke's work small: a leaf of at most 1 KiB is
// copied and re-measured, and with 32 kids a node a 5 MB document is three
// levels deep, a 50 KB one two.
var defaultShape = &shape{minLeaf: 256, maxLeaf: 1024, target: 768, fanout: 32}

// rope is an immutable text. The zero rope is not valid; use newRope.
type rope struct {
	root *node
	sh   *shape
}

// newRope builds a rope holding s. The leaves share s's memory.
func newRope(s string, sh *shape) rope {
	return rope{root: build(chunk(s, sh), sh), sh: sh}
}

func (r rope) len() int    { return r.root.sum.bytes }
func (r rope) breaks() int { return r.root.sum.breaks }

// newLeaf measures s and wraps it in a leaf.
func newLeaf(s string) *node {
	n := &node{text: s}
	n.sum, n.ascii, n.cr = measure(s)
	return n
}

// measure returns the summary of s, measured on its own, and whether s is
// pure ASCII and whether it contains '\r'.
func measure(s string) (sum summary, ascii, cr bool) {
	sum.bytes = len(s)
	sum.breaks = strings.Count(s, "\n")
	if strings.IndexByte(s, '\r') >= 0 {
		cr = true
		sum.breaks += strings.Count(s, "\r") - strings.Count(s, "\r\n")
	}
	sum.runes, sum.u16, ascii = countRunes(s)
	return sum, ascii, cr
}

// measureLeafPrefix returns the summary of leaf.text[:k]. Precondition: k is
// a rune boundary and not between the '\r' and '\n' of a CRLF.
func measureLeafPrefix(leaf *node, k int) summary {
	t := leaf.text
	switch {
	case k <= 0:
		return summary{}
	case k >= len(t):
		return leaf.sum
	}
	if leaf.ascii && !leaf.cr {
		n := strings.Count(t[:k], "\n")
		return summary{k, n, k, k}
	}
	if k > len(t)/2 { // measure the shorter side
		s, _, _ := measure(t[k:])
		return leaf.sum.sub(s)
	}
	s, _, _ := measure(t[:k])
	return s
}

// countRunes returns the code points and UTF-16 units of s, each invalid
// byte counting as one of each, and whether s is pure ASCII. ASCII runs are
// skipped sixteen bytes at a time.
func countRunes(s string) (runes, u16 int, ascii bool) {
	extra, pairs := 0, 0 // continuation bytes of valid runes; runes ≥ U+10000
	ascii = true
	for i := 0; i < len(s); {
		if i+16 <= len(s) && (load64(s, i)|load64(s, i+8))&0x8080808080808080 == 0 {
			i += 16
			continue
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		ascii = false
		_, w := utf8.DecodeRuneInString(s[i:])
		extra += w - 1
		if w == 4 { // only valid runes ≥ U+10000 are 4 bytes: a surrogate pair
			pairs++
		}
		i += w
	}
	runes = len(s) - extra
	return runes, runes + pairs, ascii
}

// load64 returns s[i:i+8] as a little-endian word (the compiler makes this
// one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// runeUnits returns how many code units of enc a rune of w bytes at s takes.
func runeUnits(w int, enc Encoding) int {
	switch enc {
	case UTF8:
		return w
	case UTF32:
		return 1
	default:
		if w == 4 {
			return 2
		}
		return 1
	}
}

// seamBad reports whether a chunk boundary between a and b would break the
// seam invariant: a CRLF split in two, or a valid UTF-8 sequence that starts
// in a and ends in b.
func seamBad(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a[len(a)-1] == '\r' && b[0] == '\n' {
		return true
	}
	if b[0] < 0x80 || b[0] >= 0xC0 {
		return false // b does not start with a continuation byte
	}
	for q := len(a) - 1; q >= 0 && q >= len(a)-3; q-- {
		c := a[q]
		if c < 0x80 {
			return false
		}
		if c < 0xC0 {
			continue // continuation byte: look further back for the leader
		}
		var w [8]byte
		n := copy(w[:], a[q:])
		n += copy(w[n:], b[:min(len(b), 3)])
		_, size := utf8.DecodeRune(w[:n])
		return size > 1 && q+size > len(a)
	}
	return false
}

// headOpen reports whether s could meet the chunk before it at a bad seam:
// it starts with '\n' or a continuation byte.
func headOpen(s string) bool {
	return s != "" && (s[0] == '\n' || s[0]&0xC0 == 0x80)
}

// tailOpen reports whether s could meet the chunk after it at a bad seam:
// it ends with '\r' or with a leader byte that its own bytes do not complete.
func tailOpen(s string) bool {
	if s == "" {
		return false
	}
	if s[len(s)-1] == '\r' {
		return true
	}
	for q := len(s) - 1; q >= 0 && q >= len(s)-3; q-- {
		c := s[q]
		if c < 0x80 {
			return false
		}
		if c >= 0xC0 {
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			return q+need > len(s)
		}
	}
	return false
}

// chunk cuts s into leaves of at most sh.maxLeaf bytes at safe seams. The
// leaves share s's memory. An empty s gives one empty leaf.
func chunk(s string, sh *shape) []child {
	if len(s) <= sh.maxLeaf {
		return []child{childOf(newLeaf(s))}
	}
	n := (len(s) + sh.target - 1) / sh.target
	leaves := make([]child, 0, n)
	prev := 0
	for i := 1; i < n; i++ {
		p := i * len(s) / n
		for p > prev+1 && seamBad(s[:p], s[p:]) {
			p-- // at most three steps back: to the rune's leader, or before the '\r'
		}
		leaves = append(leaves, childOf(newLeaf(s[prev:p])))
		prev = p
	}
	return append(leaves, childOf(newLeaf(s[prev:])))
}

// newInternal returns the parent of kids, which it keeps (the caller must
// not modify the slice afterwards).
func newInternal(kids []child) *node {
	n := &node{height: kids[0].n.height + 1, kids: kids}
	for _, k := range kids {
		n.sum = n.sum.add(k.sum)
	}
	return n
}

// pack groups nodes of one height under as few parents as fanout allows,
// spreading them evenly, so every parent gets at least fanout/2 kids unless
// there are fewer than that in all. It keeps sub-slices of nodes.
func pack(nodes []child, fanout int) []child {
	return packInto(nil, nodes, fanout)
}

// packInto is pack appending the parents to dst.
func packInto(dst, nodes []child, fanout int) []child {
	n := len(nodes)
	if n == 0 {
		return dst
	}
	count := (n + fanout - 1) / fanout
	for i := 0; i < count; i++ {
		lo, hi := i*n/count, (i+1)*n/count
		dst = append(dst, childOf(newInternal(nodes[lo:hi:hi])))
	}
	return dst
}

// build returns the root of a tree over leaves.
func build(leaves []child, sh *shape) *node {
	if len(leaves) == 0 {
		return newLeaf("")
	}
	nodes := leaves
	for len(nodes) > 1 {
		nodes = pack(nodes, sh.fanout)
	}
	return nodes[0].n
}

// leafAt returns the leaf holding byte off (start ≤ off < end) and its start
// offset; for off ≥ len, the last leaf.
func (r rope) leafAt(off int) (*node, int) {
	n, start := r.root, 0
	for n.height > 0 {
		last := len(n.kids) - 1
		i := 0
		for ; i < last; i++ {
			b := n.kids[i].sum.bytes
			if off < start+b {
				break
			}
			start += b
		}
		n = n.kids[i].n
	}
	return n, start
}

// replace returns a rope whose bytes [s, e) are replaced by t. Offsets are
// clamped to the text; e < s counts as e = s. r is not changed.
func (r rope) replace(s, e int, t string) rope {
	n := r.len()
	s = min(max(s, 0), n)
	e = min(max(e, s), n)
	if s == e && t == "" {
		return r
	}
	sh := r.sh
	// The region [S, E) of whole leaves that the edit touches.
	li, S := r.leafAt(s)
	lj, sj := li, S
	if e > s {
		lj, sj = r.leafAt(e - 1)
	}
	E := sj + len(lj.text)

	var b strings.Builder
	b.Grow(s - S + len(t) + E - e)
	b.WriteString(li.text[:s-S])
	b.WriteString(t)
	b.WriteString(lj.text[e-sj:])
	m := b.String()

	// Absorb a neighbour where the new region is too small to be a leaf or
	// would meet it at a bad seam; the outer seam is then an old one whose
	// bytes are unchanged (neighbours have at least minLeaf ≥ 4 bytes).
	// The neighbours are looked up only when m's edge could make a bad seam.
	if S > 0 && (len(m) < sh.minLeaf || headOpen(m)) {
		p, ps := r.leafAt(S - 1)
		if len(m) < sh.minLeaf || seamBad(p.text, m) {
			m = p.text + m
			S = ps
		}
	}
	if E < n && (len(m) < sh.minLeaf || tailOpen(m)) {
		q, _ := r.leafAt(E)
		if len(m) < sh.minLeaf || seamBad(m, q.text) {
			m += q.text
			E += len(q.text)
		}
	}
	leaves := chunk(m, sh)
	if r.root.height == 0 || (S == 0 && E == n) {
		return rope{root: build(leaves, sh), sh: sh}
	}
	nodes := splice(r.root, S, E, leaves, sh, nil)
	for len(nodes) > 1 {
		nodes = pack(nodes, sh.fanout)
	}
	if len(nodes) == 0 {
		return rope{root: newLeaf(""), sh: sh}
	}
	root := nodes[0].n
	for root.height > 0 && len(root.kids) == 1 {
		root = root.kids[0].n
	}
	return rope{root: root, sh: sh}
}

// splice replaces the leaves covering bytes [S, E) of n's subtree (S and E
// are leaf boundaries, S < E) by repl and appends to dst the nodes, of n's
// height, that take n's place: usually one; none if everything went;
// several if repl overflowed n. A single such node may be underfull; the
// caller merges it with a sibling. Precondition: n.height ≥ 1.
func splice(n *node, S, E int, repl []child, sh *shape, dst []child) []child {
	kids := n.kids
	if n.height == 1 {
		a, b := boundaryIndex(kids, S), boundaryIndex(kids, E)
		nk := make([]child, 0, a+len(repl)+len(kids)-b)
		nk = append(nk, kids[:a]...)
		nk = append(nk, repl...)
		nk = append(nk, kids[b:]...)
		return packInto(dst, nk, sh.fanout)
	}
	a, sa := kidAt(kids, S)
	b, sb := kidAt(kids, E-1)
	// Room for the usual one or two new kids; append grows it after a
	// large paste.
	nk := make([]child, 0, len(kids)+2)
	nk = append(nk, kids[:a]...)
	if a == b {
		nk = splice(kids[a].n, S-sa, E-sa, repl, sh, nk)
	} else {
		nk = splice(kids[a].n, S-sa, kids[a].sum.bytes, repl, sh, nk)
		nk = splice(kids[b].n, 0, E-sb, nil, sh, nk)
	}
	nk = append(nk, kids[b+1:]...)
	nk = fixUnderfull(nk, sh)
	return packInto(dst, nk, sh.fanout)
}

// boundaryIndex returns the index of the kid that starts at byte off, or
// len(kids) when off is the end. Precondition: off is a kid boundary.
func boundaryIndex(kids []child, off int) int {
	start := 0
	for i, k := range kids {
		if start >= off {
			return i
		}
		start += k.sum.bytes
	}
	return len(kids)
}

// kidAt returns the index and start of the kid holding byte off, or the last
// kid when off is past the end.
func kidAt(kids []child, off int) (int, int) {
	start := 0
	last := len(kids) - 1
	for i := 0; i < last; i++ {
		b := kids[i].sum.bytes
		if off < start+b {
			return i, start
		}
		start += b
	}
	return last, start
}

// underfull reports whether an internal node has fewer kids than a non-root
// node may have.
func underfull(n *node, sh *shape) bool {
	return n.height > 0 && len(n.kids) < sh.fanout/2
}

// fixUnderfull merges every underfull node of nodes (siblings of one height
// ≥ 1, in a fresh slice it may reuse) with a neighbour.
func fixUnderfull(nodes []child, sh *shape) []child {
	for i := 0; i < len(nodes) && len(nodes) > 1; {
		if !underfull(nodes[i].n, sh) {
			i++
			continue
		}
		j := i
		if j == len(nodes)-1 {
			j--
		}
		m := mergeNodes(nodes[j].n, nodes[j+1].n, sh)
		rest := nodes[j+2:]
		out := make([]child, 0, j+len(m)+len(rest))
		out = append(out, nodes[:j]...)
		out = append(out, m...)
		nodes = append(out, rest...)
		i = j
	}
	return nodes
}

// mergeNodes joins two adjacent nodes of one height ≥ 1 into one or two,
// merging their touching kids too when either is underfull (an underfull
// node is only ever alone at the edge of a subtree, so the seam is where it
// can be).
func mergeNodes(x, y *node, sh *shape) []child {
	kids := make([]child, 0, len(x.kids)+len(y.kids))
	lx, fy := x.kids[len(x.kids)-1].n, y.kids[0].n
	if x.height >= 2 && (underfull(lx, sh) || underfull(fy, sh)) {
		kids = append(kids, x.kids[:len(x.kids)-1]...)
		kids = append(kids, mergeNodes(lx, fy, sh)...)
		kids = append(kids, y.kids[1:]...)
	} else {
		kids = append(kids, x.kids...)
		kids = append(kids, y.kids...)
	}
	return pack(kids, sh.fanout)
}

// snap moves off (clamped to the text) back to the start of the valid UTF-8
// sequence it falls inside, or before the '\r' when it falls inside a CRLF.
func (r rope) snap(off int) int {
	off = min(max(off, 0), r.len())
	leaf, start := r.leafAt(off)
	return start + snapLocal(leaf.text, off-start)
}

// snapLocal is snap within one leaf; chunk boundaries never need snapping.
func snapLocal(t string, k int) int {
	if k <= 0 || k >= len(t) {
		return k
	}
	if t[k-1] == '\r' && t[k] == '\n' {
		return k - 1
	}
	if c := t[k]; c < 0x80 || c >= 0xC0 {
		return k
	}
	for q := k - 1; q >= 0 && q >= k-3; q-- {
		c := t[q]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 {
			if _, w := utf8.DecodeRuneInString(t[q:]); w > 1 && q+w > k {
				return q
			}
			break
		}
	}
	return k
}

// prefix returns the summary of bytes [0, off). Precondition: off is a rune
// boundary, not inside a CRLF (see snap), and within the text.
func (r rope) prefix(off int) summary {
	leaf, start, before := r.locate(off)
	return before.add(measureLeafPrefix(leaf, off-start))
}

// breakAt returns the start and end offsets of the k-th line terminator
// (k ≥ 1). Precondition: k ≤ r.breaks().
func (r rope) breakAt(k int) (start, end int) {
	_, off, s, e := r.breakLeaf(k)
	return off + s, off + e
}

// breakLeaf returns the leaf holding the k-th line terminator (k ≥ 1), the
// leaf's start, and the terminator's start and end within the leaf.
// Precondition: k ≤ r.breaks().
func (r rope) breakLeaf(k int) (leaf *node, off, start, end int) {
	n, seen := r.root, 0
	for n.height > 0 {
		last := len(n.kids) - 1
		i := 0
		for ; i < last; i++ {
			kid := &n.kids[i]
			if seen+kid.sum.breaks >= k {
				break
			}
			seen += kid.sum.breaks
			off += kid.sum.bytes
		}
		n = n.kids[i].n
	}
	start, end = leafBreak(n, k-seen)
	return n, off, start, end
}

// locate returns the leaf holding byte off (as leafAt), its start, and the
// summary of all the text before it.
func (r rope) locate(off int) (leaf *node, start int, before summary) {
	n := r.root
	for n.height > 0 {
		last := len(n.kids) - 1
		i := 0
		for ; i < last; i++ {
			k := &n.kids[i]
			if off < before.bytes+k.sum.bytes {
				break
			}
			before = before.add(k.sum)
		}
		n = n.kids[i].n
	}
	return n, before.bytes, before
}

// leafBreak returns the start and end of the j-th (j ≥ 1) line terminator
// in a leaf, or the leaf's end if it has fewer.
func leafBreak(leaf *node, j int) (int, int) {
	t := leaf.text
	if !leaf.cr {
		i := 0
		for {
			x := strings.IndexByte(t[i:], '\n')
			if x < 0 {
				return len(t), len(t)
			}
			i += x
			if j--; j == 0 {
				return i, i + 1
			}
			i++
		}
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\n':
			if j--; j == 0 {
				return i, i + 1
			}
		case '\r':
			w := 1
			if i+1 < len(t) && t[i+1] == '\n' {
				w = 2
			}
			if j--; j == 0 {
				return i, i + w
			}
			i += w - 1
		}
	}
	return len(t), len(t)
}

// unitsOffset returns the offset where the text's first u code units of enc
// (UTF-16 or UTF-32) end; if that is inside a surrogate pair, the offset of
// the pair's rune. Past the end it returns the text's length.
func (r rope) unitsOffset(enc Encoding, u int) int {
	n, off, acc := r.root, 0, 0
	for n.height > 0 {
		last := len(n.kids) - 1
		i := 0
		for ; i < last; i++ {
			kid := &n.kids[i]
			ku := kid.sum.units(enc)
			if u < acc+ku {
				break
			}
			acc += ku
			off += kid.sum.bytes
		}
		n = n.kids[i].n
	}
	rem := u - acc
	t := n.text
	if rem >= n.sum.units(enc) {
		return off + len(t)
	}
	if n.ascii {
		return off + rem
	}
	pos, cu := 0, 0
	for pos < len(t) && cu < rem {
		w := 1
		if t[pos] >= utf8.RuneSelf {
			_, w = utf8.DecodeRuneInString(t[pos:])
		}
		k := runeUnits(w, enc)
		if cu+k > rem {
			break
		}
		cu += k
		pos += w
	}
	return off + pos
}

// slice returns bytes [start, end), clamped. Within one leaf it shares the
// leaf's memory; otherwise it copies.
func (r rope) slice(start, end int) string {
	n := r.len()
	start = min(max(start, 0), n)
	end = min(max(end, start), n)
	if start == end {
		return ""
	}
	leaf, ls := r.leafAt(start)
	if end <= ls+len(leaf.text) {
		return leaf.text[start-ls : end-ls]
	}
	var b strings.Builder
	b.Grow(end - start)
	appendRange(&b, r.root, 0, start, end)
	return b.String()
}

func appendRange(b *strings.Builder, n *node, nodeStart, start, end int) {
	if n.height == 0 {
		lo := max(start-nodeStart, 0)
		hi := min(end-nodeStart, len(n.text))
		b.WriteString(n.text[lo:hi])
		return
	}
	s := nodeStart
	for _, k := range n.kids {
		if s >= end {
			return
		}
		e := s + k.sum.bytes
		if e > start {
			appendRange(b, k.n, s, start, end)
		}
		s = e
	}
}

// equalString reports whether the rope's text is s, without materialising it.
func (r rope) equalString(s string) bool {
	if r.len() != len(s) {
		return false
	}
	off := 0
	ok := true
	walkLeaves(r.root, func(t string) bool {
		if s[off:off+len(t)] != t {
			ok = false
			return false
		}
		off += len(t)
		return true
	})
	return ok
}

// walkLeaves calls f with each leaf's text in order until f returns false.
func walkLeaves(n *node, f func(string) bool) bool {
	if n.height == 0 {
		return f(n.text)
	}
	for _, k := range n.kids {
		if !walkLeaves(k.n, f) {
			return false
		}
	}
	return true
}
