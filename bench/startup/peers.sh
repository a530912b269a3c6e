#!/usr/bin/env bash
# Issue 11's start-up and memory comparison: kimi-lsp against hexai and
# helix-assist (two Go language servers for AI completion and code actions)
# on the same scenario: initialize, 8 files of 50 KB opened, 2,000 typing
# edits, a codeAction (neither peer answers unknown methods, so it is the
# request that follows), memory read 0.5 s later.
#
#   HEXAI_SRC=/tmp/peers/hexai HELIX_ASSIST_SRC=/tmp/peers/helix-assist \
#       bench/startup/peers.sh [-n 21]
#
# HEXAI_SRC and HELIX_ASSIST_SRC are source trees of
# github.com/snonux/hexai (cmd/hexai-lsp) and github.com/leona/helix-assist
# (cmd/helix-assist); a peer whose variable is unset is left out. Every
# binary is built here the same way: CGO_ENABLED=0 by default, as `make
# install` builds kimi-lsp; CGO=1 builds them all with cgo (dynamically
# linked, as a plain `go build` does where a C compiler is present).
# helix-assist refuses to start without a key; it gets a dummy one (it makes
# no request at start). Extra arguments go to bench/startup.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d -t kimi-peers-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CGO_ENABLED=${CGO:-0}

go build -o "$tmp/kimi-lsp" ./cmd/kimi-lsp
servers=(-server "kimi-lsp=$tmp/kimi-lsp")
if [[ -n "${HEXAI_SRC:-}" ]]; then
	(cd "$HEXAI_SRC" && go build -o "$tmp/hexai-lsp" ./cmd/hexai-lsp)
	servers+=(-server "hexai=$tmp/hexai-lsp")
fi
if [[ -n "${HELIX_ASSIST_SRC:-}" ]]; then
	(cd "$HELIX_ASSIST_SRC" && go build -o "$tmp/helix-assist" ./cmd/helix-assist)
	servers+=(-server "helix-assist=OPENAI_API_KEY=sk-bench $tmp/helix-assist")
fi
echo "kimi-lsp $(git rev-parse --short HEAD 2>/dev/null || echo "(no git)"), $(go version), CGO_ENABLED=$CGO_ENABLED" >&2
ls -l "$tmp" >&2

go run ./bench/startup "${servers[@]}" -buffers 8 -edits 2000 -sync codeAction -settle 500ms -n 21 "$@"
