#!/usr/bin/env bash
# Builds kimi-lsp, installs @github/copilot-language-server with npm into a
# temporary directory (never into the tree), and runs bench/startup on both
# in the same run. Extra arguments go to the program (e.g. -n 11).
#
#   bench/startup/run.sh [-n 7] [-settle 2s] ...
#
# COPILOT_LS=/path/to/copilot-language-server skips the npm install;
# COPILOT_VERSION picks the npm version (default below). The native
# linux-x64 binary the package ships is run directly (it is Node with the
# server bundled; the package's language-server.js starts that same binary
# when the installed Node is older than the 22.13 it wants).
set -euo pipefail
cd "$(dirname "$0")/../.."
COPILOT_VERSION=${COPILOT_VERSION:-1.539.0}
tmp=$(mktemp -d -t kimi-startup-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -o "$tmp/kimi-lsp" ./cmd/kimi-lsp # as make install does

if [[ -z "${COPILOT_LS:-}" ]]; then
	arch=$(node -p 'process.platform + "-" + process.arch')
	(cd "$tmp" && npm install --silent --no-audit --no-fund --prefix "$tmp/npm" \
		"@github/copilot-language-server@$COPILOT_VERSION" >&2)
	COPILOT_LS="$tmp/npm/node_modules/@github/copilot-language-server-$arch/copilot-language-server"
fi
echo "copilot-language-server $("$COPILOT_LS" --version) at $COPILOT_LS" >&2
echo "kimi-lsp $(git rev-parse --short HEAD 2>/dev/null || echo "(no git)") $(go version)" >&2

go run ./bench/startup -server "kimi-lsp=$tmp/kimi-lsp" -server "copilot=$COPILOT_LS --stdio" "$@"
