// Package ignore decides which paths of a workspace folder stay out of the
// disk view, out of file watching and out of prompts.
//
// A Matcher combines, from lowest to highest precedence:
//
//   - .git/info/exclude of the folder;
//   - the .gitignore file of every directory, a deeper file overriding a
//     shallower one, the last matching line of a file deciding, "!" negating,
//     a trailing "/" matching directories only, and no way to re-include a
//     path whose parent directory is excluded (as git does);
//   - "hard" excludes that no .gitignore can negate: DefaultExcludes (unless
//     turned off) and the user's exclude list.
//
// Patterns are gitignore syntax everywhere, including the user's globs and the
// secret globs of package workspace (List).
//
// # Choice of matcher
//
// The patterns are matched by our own code (pattern.go), written to git's
// rules rather than taken from a library. Until issue 11 the matcher was
// github.com/go-git/go-git/v5/plumbing/format/gitignore behind an adapter,
// chosen by measurement against `git check-ignore` (git 2.39) on 17 real
// trees and 151 paths, each driven through the same per-directory
// precedence walk:
//
//	go-git v5.19.3 as is                      144/151 agree
//	go-git v5.19.3 with an adapter            150/151 agree
//	sabhiram/go-gitignore (last change 2021)  132/151 agree
//	monochromegane/go-gitignore (2020)        128/151 agree
//
// go-git's "**" did not backtrack (a/**/b/c did not match a/b/x/b/c), and
// the package brought go-git's config parser and with it encoding/gob,
// whose package init was the costliest one of the server's start (429
// allocations). Our matcher agrees on every path of git_test.go (now 20
// trees, 192 paths, among them git's own quirks: "a**/b" matches a/x/b
// because git matches a pattern's literal start apart, "[]a]" is a set
// holding "]", an unknown "[:class:]" never matches), and two differential
// tests hold it to the real `git check-ignore`: FuzzAgainstGit over
// fuzzed patterns and trees, TestRandomAgainstGit over generated ones
// (-ignore.rounds=1500 found no difference).
//
// The global core.excludesFile is not read: the view must not depend on the
// user's git configuration to be reproducible.
package ignore
