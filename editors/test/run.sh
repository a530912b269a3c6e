#!/usr/bin/env bash
# Runs every editor test: builds kimi-lsp and the stand-in provider, the VS
# Code extension's compile and unit tests, the Helix config check, the
# protocol harness on vscode-languageserver-protocol, headless Neovim,
# Emacs + eglot in batch mode, and `kimi-lsp acp` through the ACP client
# library (@agentclientprotocol/sdk). Needs go, node/npm, nvim (Debian's neovim)
# and emacs with eglot (Debian's emacs-nox and elpa-eglot, or Emacs 29+) on
# PATH, and gopls and pyright-langserver (.ci/run installs them). Exits
# non-zero on any failure.
#
#   editors/test/run.sh            # everything
#   KIMI_E2E_ONLY=helix editors/test/run.sh   # one of: vscode, vscode-e2e, helix, ci, lsp, nvim, emacs, acp
#
# vscode-e2e runs the packaged extension in code-server under headless
# Chromium: it needs Debian's chromium (or KIMI_CHROMIUM) and installs Node
# 24, code-server and playwright-core once into the cache (code-server.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
only="${KIMI_E2E_ONLY:-}"
want() {
  [[ -z "$only" || "$only" == "$1" ]]
}

# need TOOL WHAT: stop with a sentence when TOOL is missing.
need() {
  command -v "$1" >/dev/null 2>&1 || { echo "editors/test/run.sh: $1 not found: $2" >&2; exit 1; }
}
need node "the editor tests need Node.js ≥ 20.10 (https://nodejs.org); .ci/run checks and installs what they need"
need npm "the editor tests install their packages with npm (it comes with Node.js)"
if want lsp || want nvim || want emacs || want helix || want vscode-e2e || want acp; then need go "the editor tests build kimi-lsp with Go (https://go.dev/dl)"; fi
if want helix; then need script "the Helix test runs hx in a terminal made by script(1) (util-linux)"; fi
if want nvim; then need nvim "the Neovim tests need Neovim ≥ 0.7 (Debian: apt-get install neovim)"; fi
# The helper language servers kimi-lsp starts for Fix from their diagnostics
# and for the definitions in the context (.ci/run installs both, pinned).
if want vscode-e2e; then
  need gopls "the VS Code test of Fix verified by gopls needs gopls (go install golang.org/x/tools/gopls@v0.23.0; .ci/run does)"
  need git "the VS Code test of Review Changes needs git"
  chromium="${KIMI_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
  [[ -n "$chromium" ]] || { echo "editors/test/run.sh: chromium not found: the VS Code tests run code-server in headless Chromium (Debian: apt-get install chromium; .ci/run does), or set KIMI_CHROMIUM" >&2; exit 1; }
fi
if want nvim || want emacs || want acp; then
  need gopls "the Neovim, Emacs and ACP tests of verification need gopls (go install golang.org/x/tools/gopls@v0.23.0; .ci/run does)"
fi
if want nvim; then
  need pyright-langserver "the Neovim test of verification in Python needs pyright (npm install -g pyright@1.1.414; .ci/run does)"
fi
if want emacs; then
  need emacs "the Emacs tests need Emacs with eglot (Debian: apt-get install emacs-nox elpa-eglot; Emacs 29+ has eglot built in)"
  emacs --batch -q --eval "(require 'eglot)" >/dev/null 2>&1 ||
    { echo "editors/test/run.sh: $(command -v emacs) has no eglot: the Emacs tests need it (Debian: apt-get install elpa-eglot; Emacs 29+ has it built in)" >&2; exit 1; }
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Every temporary directory the tests, the servers and the editors make
# goes under $tmp, so the trap removes them all: nothing is left in /tmp.
mkdir -p "$tmp/tmp"
export TMPDIR="$tmp/tmp"

if want lsp || want nvim || want emacs || want helix || want vscode-e2e || want acp; then
  echo "== building kimi-lsp and kimi-standin"
  (cd "$repo" && go build -o "$tmp/kimi-lsp" ./cmd/kimi-lsp)
  (cd "$repo" && go build -o "$tmp/kimi-standin" ./assist/model/modeltest/cmd/kimi-standin)
  export KIMI_LSP_BIN="$tmp/kimi-lsp" KIMI_STANDIN_BIN="$tmp/kimi-standin"
fi

if want vscode || want vscode-e2e; then
  echo "== editors/vscode: npm ci, compile, unit tests, package (esbuild bundle), the bundle activates"
  (cd "$repo/editors/vscode" && npm ci --no-audit --no-fund --loglevel=error && npm test)
  (cd "$repo/editors/vscode" && npx vsce package --no-dependencies --skip-license --out "$tmp/kimi-lsp.vsix" >"$tmp/vsce.log" 2>&1) ||
    { cat "$tmp/vsce.log"; exit 1; }
  if grep -q WARNING "$tmp/vsce.log"; then
    cat "$tmp/vsce.log"; echo "vsce warned (the package must hold the bundle only)"; exit 1
  fi
  (cd "$repo/editors/vscode" && KIMI_EXTENSION_MAIN="$PWD/dist/extension.js" node --test out/test/activation.test.js)
  echo "packaged $(du -h "$tmp/kimi-lsp.vsix" | cut -f1) .vsix $(grep -o '([0-9]* files' "$tmp/vsce.log" | tr -d '(')"
fi

# from_sid VAR SCRIPT WHAT MISSING: exports VAR as the path of the editor
# SCRIPT fetches from Debian sid (once, into the cache), or says "no
# MISSING" when none can be had.
from_sid() {
  local bin
  echo "== $3"
  if bin="$("$here/$2")"; then
    export "$1=$bin"
    echo "using $("$bin" --version | head -1) ($bin)"
  else
    echo "no $4"
  fi
}

if want nvim && [[ -z "${NVIM012_BIN:-}" ]]; then
  # Neovim 0.12+ for the vim.lsp.inline_completion test: Debian sid's,
  # fetched once into the cache (nvim012.sh); without one it is skipped.
  from_sid NVIM012_BIN nvim012.sh "Neovim 0.12 for the built-in inline completion test" "Neovim 0.12 could be had: that test is skipped"
fi

if want emacs && [[ -z "${EMACS30_BIN:-}" ]]; then
  # Emacs 30 (eglot 1.17 built in) for what a newer eglot declares
  # ($/progress, showDocument): Debian sid's, fetched once into the cache
  # (emacs30.sh); without one those tests are skipped.
  from_sid EMACS30_BIN emacs30.sh "Emacs 30 for the newer eglot's tests" "Emacs 30 could be had: those tests are skipped"
fi

if want helix && [[ -z "${HELIX_BIN:-}" ]]; then
  # Helix itself for the test in a terminal: Debian sid's hx, fetched once
  # into the cache (helix.sh); without one that test is skipped.
  from_sid HELIX_BIN helix.sh "Helix for the test in a terminal" "Helix could be had: that test is skipped"
fi

if want vscode-e2e; then
  echo "== Node 24, code-server and playwright-core for the VS Code test (installed once into the cache)"
  assignments="$("$here/code-server.sh")"
  while IFS='=' read -r name value; do export "$name=$value"; done <<<"$assignments"
  export KIMI_CHROMIUM="$chromium" KIMI_VSIX="$tmp/kimi-lsp.vsix"
  # The version from its package.json: "code-server --version" writes a
  # config file into ~/.config.
  echo "using code-server $("$KIMI_NODE24" -p "require('$(dirname "$KIMI_CODE_SERVER")/../../package.json').version") on Node $("$KIMI_NODE24" --version), $("$chromium" --version 2>/dev/null | grep -o 'Chromium [0-9.]*')"
fi

files=()
want helix && files+=(helix.test.mjs helix-real.test.mjs)
want vscode-e2e && files+=(vscode.test.mjs)
want ci && files+=(ci.test.mjs)
want lsp && files+=(lsp.test.mjs completion.test.mjs)
want nvim && files+=(nvim.test.mjs)
want emacs && files+=(emacs.test.mjs)
want acp && files+=(acp.test.mjs)
if ((${#files[@]} > 0)); then
  echo "== editors/test: ${files[*]}"
  cd "$here"
  npm ci --no-audit --no-fund --loglevel=error
  node --test --test-concurrency=1 "${files[@]}"
fi
