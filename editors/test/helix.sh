#!/usr/bin/env bash
# Prints the path of a Helix (hx) that runs on this machine, for the test of
# Helix itself in a terminal (helix-real.test.mjs, HELIX_BIN). Debian
# bookworm has no Helix; Debian sid ships hx (25.07.1 and later commits),
# built against a newer glibc. So this fetches sid's hx and what it depends
# on (glibc included, about 9 MB) with apt-get into a private directory
# (its own package lists; nothing is installed on the system), and writes a
# wrapper that starts hx with sid's own dynamic loader and libraries and
# its runtime directory. The result is kept for the next run. Exits
# non-zero, saying why on stderr, when no such Helix can be had.
set -euo pipefail
# shellcheck source=sid.sh
source "$(dirname "${BASH_SOURCE[0]}")/sid.sh"

dir="${KIMI_HELIX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kimi-lsp/helix}"
wrapper="$dir/hx"
ishelix() { "$1" --version </dev/null 2>/dev/null | grep -q '^helix '; }

write_wrapper() {
  local root="$dir/root" lib="$dir/root/usr/lib/x86_64-linux-gnu"
  cat >"$wrapper" <<WRAP
#!/bin/sh
# Debian sid's Helix with sid's loader and libraries (see editors/test/helix.sh).
# kimi-helix-wrapper 1
HELIX_RUNTIME="$root/usr/lib/hx/runtime" exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$root/usr/lib/hx/hx" "\$@"
WRAP
  chmod +x "$wrapper"
}

if [[ -x "$dir/root/usr/lib/hx/hx" ]]; then
  grep -q 'kimi-helix-wrapper 1' "$wrapper" 2>/dev/null || write_wrapper
  if ishelix "$wrapper"; then
    echo "$wrapper"
    exit 0
  fi
fi
sid_fetch helix.sh "$dir" hx
write_wrapper
if ! ishelix "$wrapper"; then
  echo "helix.sh: Debian sid's hx did not start here" >&2
  exit 1
fi
echo "$wrapper"
