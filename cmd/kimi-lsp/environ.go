package main

import (
	"os"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/childenv"
)

// Keeping the key from the programs kimi-lsp starts (issue 30 item 5).
// The helpers and git get an environment by allow-list (assist/verify,
// assist's review of changes), but a program can also read its parent's
// environment: on Linux /proc/PPID/environ shows the environment the
// process was started with, whatever it unset since. So main, before
// anything else runs:
//   - takes the credential variables' values into the getenv the commands
//     use (the configuration reads KIMI_API_KEY through it), and unsets
//     them, so os.Environ (and so any child) has none of them;
//   - on Linux, overwrites their values in the environment block the
//     kernel shows (hideInBlock), so /proc/PID/environ shows none of
//     them even to root, and makes the process non-dumpable, so other
//     processes of the user can neither read its /proc files nor attach
//     a debugger to it (a process running as root still can read its
//     memory: the kernel does not stop root).
// On macOS, ps -E of the same user shows the environment the process
// started with; the key is safest in the user file there (or VS Code's
// secret storage), never in the environment.

// protectEnvironment returns the getenv of the commands: the process's
// environment, with the credential variables' values kept here only (see
// above).
func protectEnvironment() func(string) string {
	kept := map[string]string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || !childenv.Credential(name) {
			continue
		}
		kept[name] = os.Getenv(name)
		os.Unsetenv(name)
	}
	// The block holds what the environment held at exec, which os.Environ
	// copied: with no credential there, there is nothing to overwrite, and
	// reading /proc/self/stat to find the block (about 20 µs of CPU before
	// the initialize reply, bench/README.md) is skipped.
	if len(kept) > 0 {
		hideInBlock(childenv.Credential)
	}
	makeNonDumpable()
	return func(k string) string {
		if v, ok := kept[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}
