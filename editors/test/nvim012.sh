#!/usr/bin/env bash
# Prints the path of a Neovim 0.12+ that runs on this machine, for the
# vim.lsp.inline_completion test (nvim.test.mjs, NVIM012_BIN). Debian
# bookworm ships 0.7; Debian sid ships 0.12+, built against a newer glibc. So
# this fetches sid's neovim and everything it depends on (glibc included)
# with apt-get, into a private directory (its own package lists; nothing is
# installed on the system), and writes a wrapper that starts nvim with sid's
# own dynamic loader and libraries. The result is kept for the next run.
# Exits non-zero, saying why on stderr, when no such Neovim can be had.
set -euo pipefail
# shellcheck source=sid.sh
source "$(dirname "${BASH_SOURCE[0]}")/sid.sh"

dir="${KIMI_NVIM012_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kimi-lsp/nvim012}"
wrapper="$dir/nvim"
is012() { "$1" --headless -u NONE -i NONE -n -c 'if !has("nvim-0.12") | cquit 1 | endif' -c 'qall!' </dev/null >/dev/null 2>&1; }

# write_wrapper writes the nvim wrapper around the unpacked root. Run
# through sid's loader, nvim's own path (/proc/self/exe) is the loader, so
# the TUI, which starts its server as "$(progpath) --embed", would start
# the loader with --embed and fail: interactively (a terminal, and none of
# --headless, --embed, --remote… from the caller) the wrapper starts the
# server itself (--headless --listen SOCKET) and attaches the TUI to it
# with --remote-ui. ":qa" in the TUI ends both.
# For the same reason nvim finds its library directory (the tree-sitter
# parsers: markdown, lua, vim, …) relative to the loader, at
# …/usr/lib/lib/nvim, which does not exist: every Markdown buffer then
# raised E5113 (no parser for "markdown") and a "Press ENTER" prompt. The
# wrapper replaces that entry of 'runtimepath' with sid's …/usr/lib/nvim
# before anything is loaded (--cmd).
write_wrapper() {
  local lib="$dir/root/usr/lib/x86_64-linux-gnu"
  cat >"$wrapper" <<EOF
#!/bin/sh
# Debian sid's Neovim with sid's loader and libraries (see editors/test/nvim012.sh).
# kimi-nvim012-wrapper 3: interactive use through --remote-ui; the library directory in 'runtimepath'.
rtp="let &rtp = substitute(&rtp, '\\V$dir/root/usr/lib/lib/nvim', '$dir/root/usr/lib/nvim', 'g')"
nvim() { VIM="$dir/root/usr/share/nvim" "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$dir/root/usr/bin/nvim" "\$@"; }
interactive=1
[ -t 0 ] && [ -t 1 ] || interactive=0
for a in "\$@"; do
  case "\$a" in --headless|--embed|--remote*|--server|--listen|-es|-Es|--version|-v|-h|--help|--api-info) interactive=0 ;; esac
done
if [ "\$interactive" = 0 ]; then
  nvim --cmd "\$rtp" "\$@"
  exit \$?
fi
sock="\${TMPDIR:-/tmp}/kimi-nvim012.\$\$.sock"
nvim --headless --listen "\$sock" --cmd "\$rtp" "\$@" </dev/null >/dev/null 2>&1 &
server=\$!
i=0
while [ ! -S "\$sock" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
nvim --remote-ui --server "\$sock"
code=\$?
kill \$server 2>/dev/null
rm -f "\$sock"
exit \$code
EOF
  chmod +x "$wrapper"
}

if [[ -x "$dir/root/usr/bin/nvim" ]]; then
  grep -q 'kimi-nvim012-wrapper 3' "$wrapper" 2>/dev/null || write_wrapper
  if is012 "$wrapper"; then
    echo "$wrapper"
    exit 0
  fi
fi
sid_fetch nvim012.sh "$dir" neovim
write_wrapper
if ! is012 "$wrapper"; then
  echo "nvim012.sh: Debian sid's nvim did not start as 0.12+ here" >&2
  exit 1
fi
echo "$wrapper"
