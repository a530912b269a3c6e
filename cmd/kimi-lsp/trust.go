package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/rulefile"
)

// newTrustFlags returns trust's (and untrust's) flag set: the logging
// flags every command has, none of its own.
func newTrustFlags(name string) func(stderr io.Writer) *flag.FlagSet {
	return func(stderr io.Writer) *flag.FlagSet {
		fs := newFlagSet(name, stderr)
		new(logFlags).register(fs)
		return fs
	}
}

// cmdTrust adds (trust true) or removes DIR (default: the current
// directory, its links resolved) to or from trust.folders in the user
// file, through the confined writer.
func cmdTrust(args []string, trust bool, stdout, stderr io.Writer, getenv func(string) string) int {
	name := "untrust"
	if trust {
		name = "trust"
	}
	fs := newTrustFlags(name)(stderr)
	rest, code, ok := parseFlags(fs, args, stdout, anyArgs)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		fmt.Fprintf(stderr, "kimi-lsp %s: want at most one DIR, got %q\n", name, rest)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kimi-lsp %s: %s\n", name, fmt.Sprintf(format, a...))
		return 1
	}
	dir := "."
	if len(rest) == 1 {
		dir = rest[0]
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail("%v", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		if fi, serr := os.Stat(real); serr != nil || !fi.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil && trust {
		return fail("%s: %v (name a folder to trust)", abs, err)
	}
	if err != nil {
		real = filepath.Clean(abs) // untrusting a folder that is gone
	}
	path := config.UserFilePath(getenv)
	if path == "" {
		return fail("no user config file: set HOME or XDG_CONFIG_HOME")
	}
	cfg, _ := config.Load(nil, path)
	folders := slices.Clone(cfg.Trust.Folders)
	had := slices.Contains(folders, real)
	switch {
	case trust && had:
		fmt.Fprintf(stdout, "%s is trusted already (%s)\n", real, path)
		return 0
	case trust:
		folders = append(folders, real)
	case !had:
		if ok, why := cfg.TrustOf(real); ok {
			return fail("%s is %s: untrust that folder instead", real, why)
		}
		fmt.Fprintf(stdout, "%s is not trusted (%s)\n", real, path)
		return 0
	default:
		folders = slices.DeleteFunc(folders, func(f string) bool { return f == real })
	}
	if err := editUserFile(path, folders); err != nil {
		return fail("%s: %v", path, err)
	}
	if trust {
		fmt.Fprintf(stdout, "trusted %s (trust.folders in %s): helpers there now run as your editor would run them; a running kimi-lsp applies it at once (its helpers there start again)\n", real, path)
	} else {
		fmt.Fprintf(stdout, "untrusted %s (trust.folders in %s): helpers there run restricted; a running kimi-lsp applies it at once (its helpers there start again)\n", real, path)
	}
	return 0
}

// editUserFile sets trust.folders in the user file at path (creating it
// and its directory when missing), through the confined writer rooted at
// the file's directory.
func editUserFile(path string, folders []string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	text, err := rulefile.Read(dir, filepath.Base(path), 1<<20, rulefile.ToRegular)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := config.EditTrustFolders(text, folders)
	if err != nil {
		return err
	}
	w, err := workspace.NewWriter(dir, 0o600)
	if err != nil {
		return err
	}
	defer w.Close()
	return w.WriteFile(path, out)
}

// trustLine says whether the folder dir is trusted and what that changes,
// for doctor.
func trustLine(cfg config.Config, dir string) string {
	if ok, why := cfg.TrustOf(dir); ok {
		return fmt.Sprintf("%s is %s: helpers there run as your editor would run them", dir, why)
	}
	return fmt.Sprintf("%s is untrusted: %s", dir, config.UntrustedMeans)
}
