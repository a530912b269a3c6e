#!/usr/bin/env bash
# Prints the path of an Emacs 30 (eglot 1.17 built in) that runs on this
# machine, for the eglot tests of what a newer eglot declares: $/progress
# and window/showDocument (emacs.test.mjs, EMACS30_BIN). Debian bookworm
# ships Emacs 28 with elpa-eglot 1.9, which declares neither; Debian sid
# ships Emacs 30, built against a newer glibc. So this fetches sid's
# emacs-nox and everything it depends on (glibc included) with apt-get into
# a private directory (its own package lists; nothing is installed on the
# system), and writes a wrapper that starts Emacs with sid's own dynamic
# loader, libraries, Lisp directories and dump file, and with a site file
# of its own instead of the system's (bookworm's elpa-eglot 1.9 would
# shadow the built-in eglot). The result is kept for the next run. Exits non-zero, saying why
# on stderr, when no such Emacs can be had.
set -euo pipefail
# shellcheck source=sid.sh
source "$(dirname "${BASH_SOURCE[0]}")/sid.sh"

dir="${KIMI_EMACS30_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kimi-lsp/emacs30}"
wrapper="$dir/emacs"
is30() { "$1" --batch -q --eval '(kill-emacs (if (and (>= emacs-major-version 30) (require (quote eglot) nil t)) 0 1))' </dev/null >/dev/null 2>&1; }

# write_wrapper writes the emacs wrapper around the unpacked root. Run
# through sid's loader, Emacs's own path (/proc/self/exe) is the loader, so
# the wrapper names what Emacs would find next to itself: the dump file,
# the Lisp and data directories, the architecture-dependent programs. Its
# site file (site/site-start.el, first on the load path) turns off
# native-compiled trampolines: Emacs would build them with a compiler
# started as a plain program, without sid's loader, which fails here (the
# tests redefine primitives such as completing-read, which needs one).
write_wrapper() {
  local root="$dir/root" lib="$dir/root/usr/lib/x86_64-linux-gnu" ver pdmp
  ver="$(ls "$root/usr/share/emacs" | grep -E '^[0-9]+\.[0-9]+' | sort -V | tail -1)"
  pdmp="$(ls "$root/usr/libexec/emacs/$ver/x86_64-linux-gnu/"*.pdmp | head -1)"
  mkdir -p "$dir/site"
  echo '(setq native-comp-enable-subr-trampolines nil)' >"$dir/site/site-start.el"
  cat >"$wrapper" <<WRAP
#!/bin/sh
# Debian sid's Emacs $ver with sid's loader and libraries (see editors/test/emacs30.sh).
# kimi-emacs30-wrapper 2
EMACSLOADPATH="$dir/site:$root/usr/share/emacs/$ver/lisp" \\
EMACSDATA="$root/usr/share/emacs/$ver/etc" EMACSDOC="$root/usr/share/emacs/$ver/etc" \\
EMACSPATH="$root/usr/libexec/emacs/$ver/x86_64-linux-gnu" \\
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$root/usr/bin/emacs-nox" --dump-file="$pdmp" "\$@"
WRAP
  chmod +x "$wrapper"
}

if [[ -x "$dir/root/usr/bin/emacs-nox" ]]; then
  grep -q 'kimi-emacs30-wrapper 2' "$wrapper" 2>/dev/null || write_wrapper
  if is30 "$wrapper"; then
    echo "$wrapper"
    exit 0
  fi
fi
sid_fetch emacs30.sh "$dir" emacs-nox
write_wrapper
if ! is30 "$wrapper"; then
  echo "emacs30.sh: Debian sid's Emacs did not start as Emacs 30 with eglot here" >&2
  exit 1
fi
echo "$wrapper"
