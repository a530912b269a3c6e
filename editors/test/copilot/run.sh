#!/usr/bin/env bash
# By hand: one of Copilot's next-edit plugins, from its own source, against
# the real kimi-lsp and the stand-in provider (no network, nothing installed).
#
#   editors/test/copilot/run.sh copilot-lsp PLUGIN_DIR [NVIM]   # Neovim 0.11+
#   editors/test/copilot/run.sh sidekick    PLUGIN_DIR [NVIM]   # Neovim 0.11+
#   editors/test/copilot/run.sh copilot-el  PLUGIN_DIR [EMACS]  # Emacs 30
#
# PLUGIN_DIR is a checkout of copilotlsp-nvim/copilot-lsp, folke/sidekick.nvim
# or copilot-emacs/copilot.el (the commits tried are in editors/README.md,
# "What was run"); NVIM defaults to editors/test/nvim012.sh's Neovim 0.12.
# The workspace, caches and logs go to a temporary directory, printed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
which=${1:?usage: run.sh copilot-lsp|sidekick|copilot-el PLUGIN_DIR [EDITOR]}
plugin=$(cd "${2:?PLUGIN_DIR}" && pwd)
t=$(mktemp -d "${TMPDIR:-/tmp}/kimi-copilot.XXXXXX")
(cd "$repo" && CGO_ENABLED=0 go build -o "$t/kimi-lsp" ./cmd/kimi-lsp && go build -o "$t/kimi-standin" ./assist/model/modeltest/cmd/kimi-standin)
mkdir -p "$t/ws" "$t/cache" "$t/config" "$t/state" "$t/home"
printf 'module example.com/scale\n\ngo 1.22\n' >"$t/ws/go.mod"
printf 'package main\n\nfunc scale(v int, factor int) int {\n\tif factor == 0 {\n\t\treturn v\n\t}\n\treturn v * factor\n}\n' >"$t/ws/main.go"
git -C "$t/ws" init -q
# The stand-in ends when its stdin (this pipe) closes with the script.
exec 3> >("$t/kimi-standin" -addr 127.0.0.1:0 -key test-key -script "$repo/editors/test/fixtures/copilot.json" \
  -log "$t/requests.jsonl" >"$t/url" 2>"$t/standin.log")
for _ in $(seq 100); do [[ -s "$t/url" ]] && break; sleep 0.1; done
env=(WS="$t/ws" PLUGIN="$plugin" KIMI_LSP_BIN="$t/kimi-lsp" KIMI_API_KEY=test-key KIMI_BASE_URL="$(head -1 "$t/url")"
  KIMI_LOG="$t/kimi-lsp.log" HOME="$t/home" XDG_CACHE_HOME="$t/cache" XDG_CONFIG_HOME="$t/config" XDG_STATE_HOME="$t/state")
rc=0
case "$which" in
copilot-lsp | sidekick)
  nvim=${3:-$("$repo/editors/test/nvim012.sh")}
  env "${env[@]}" timeout 120 "$nvim" --headless -u NONE -i NONE -n -c "luafile $here/$which.lua" || rc=$?
  ;;
copilot-el)
  env "${env[@]}" timeout 120 "${3:-emacs}" -Q --batch -l "$here/copilot-el.el" || rc=$?
  ;;
*)
  echo "run.sh: unknown plugin $which" >&2
  exit 2
  ;;
esac
echo "provider requests: $(wc -l <"$t/requests.jsonl" 2>/dev/null || echo 0); files in $t"
exit $rc
