package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

// printSettings prints the settings that differ from their defaults, with
// their sources, and how many are at their defaults (all: every one).
func printSettings(w io.Writer, cfg config.Config, all bool) {
	defaults := 0
	for _, s := range cfg.Sources() {
		if !all && s.Source.Kind == config.FromDefault {
			defaults++
			continue
		}
		fmt.Fprintf(w, "  %s\n", s)
	}
	if defaults > 0 {
		fmt.Fprintf(w, "  and %d settings at their defaults (kimi-lsp doctor --all lists them)\n", defaults)
	}
}

// helperInstall says how to get a missing helper.
var helperInstall = map[string]string{
	"gopls":                      "go install golang.org/x/tools/gopls@latest",
	"pyright-langserver":         "npm install --global pyright",
	"typescript-language-server": "npm install --global typescript-language-server typescript",
	"rust-analyzer":              "rustup component add rust-analyzer",
	"clangd":                     "apt-get install clangd, or your system's package",
}

// printHelpers lists, per language, the helper that would check the
// model's edits in folder (found on the PATH list path) — its path and version — or what is missing and
// how to install it.
func printHelpers(ctx context.Context, w io.Writer, cfg config.Config, folder, path string) {
	fmt.Fprintf(w, "\nHelpers (language servers that check the model's edits before they land; verify.enable = %q):\n", cfg.Verify.Enable)
	if cfg.Verify.Enable == config.VerifyOff {
		fmt.Fprintln(w, "  none is started: verify.enable is off")
		return
	}
	for _, h := range assist.Helpers(cfg, folder, path) {
		langs := strings.Join(h.Languages, ", ")
		switch {
		case h.Off:
			fmt.Fprintf(w, "  %s: not checked (verify.servers maps it to no helper)\n", langs)
		case h.Path == "":
			var how []string
			for _, name := range strings.Fields(strings.TrimPrefix(h.Missing, "no ")) {
				if hint, ok := helperInstall[name]; ok {
					how = append(how, hint)
				}
			}
			line := fmt.Sprintf("  %s: not checked: %s on PATH", langs, h.Missing)
			if len(how) > 0 {
				line += " (" + strings.Join(how, "; ") + ")"
			}
			fmt.Fprintln(w, line)
		default:
			v := assist.HelperVersion(ctx, h.Path)
			if v != "" {
				v = ", " + v
			}
			fmt.Fprintf(w, "  %s: %s (%s%s)\n", langs, strings.Join(h.Command, " "), h.Path, v)
		}
	}
}
