// Package stackstart grows the main goroutine's stack, at once, to the
// 16 KiB the package initializers take it to anyway (D107). Imported for
// its side effect by cmd/kimi-lsp, it imports nothing, so it is initialized
// among the first packages (the spec initializes, of the packages whose
// imports are done, the one first by import path), while the stack is
// shallow: the initializers after it (the toml library's time zone,
// assist/config's schema) then run without copying the stack three times
// (2, 4, 8 → 16 KiB), each copy walking the frames through the function
// tables. Should the order ever change, it grows the stack later, once, at
// the same cost as the copy it replaces.
package stackstart

// mainStack is the main goroutine's stack at the end of the initializers.
const mainStack = 16 << 10

// The runtime sizes a new stack for the frame that needs it: one frame a
// little over half of mainStack makes it allocate mainStack in one step.
func init() { largeFrame() }

// largeFrame's frame holds an array of 10 KiB; the pointer to it does not
// escape, so the array is on the stack.
//
//go:noinline
func largeFrame() byte {
	var frame [mainStack * 5 / 8]byte
	return lastByte(&frame)
}

//go:noinline
func lastByte(b *[mainStack * 5 / 8]byte) byte { return b[len(b)-1] }
