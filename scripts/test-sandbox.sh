#!/bin/sh
# test-sandbox.sh runs `go test` with HOME, the XDG directories and TMPDIR
# pointed at fresh, empty directories under one parent, then fails listing
# every file the run left in them. Tests must write only in their own
# temporary directories (t.TempDir, which is removed after the test), so a
# clean run leaves all of them empty.
#
# Usage: scripts/test-sandbox.sh [go test flags and packages]  (default ./...)
#
# The Go build and module caches stay where they are (GOCACHE, GOMODCACHE,
# GOPATH and GOENV are passed explicitly), so moving HOME re-downloads and
# rebuilds nothing. The one thing not counted is the go command's own usage
# counters under $XDG_CONFIG_HOME/go/telemetry: the go tool writes them
# (the tests run `go build` and `go env` too), not the code under test.
set -eu

cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- ./...

gocache=$(go env GOCACHE)
gomodcache=$(go env GOMODCACHE)
gopath=$(go env GOPATH)
goenv=$(go env GOENV)

parent=$(mktemp -d "${TMPDIR:-/tmp}/kimi-lsp-sandbox.XXXXXX")
trap 'rm -rf "$parent"' EXIT INT TERM
for d in home config cache state data runtime tmp; do
	mkdir "$parent/$d"
done
chmod 700 "$parent/runtime"

status=0
env HOME="$parent/home" \
	XDG_CONFIG_HOME="$parent/config" \
	XDG_CACHE_HOME="$parent/cache" \
	XDG_STATE_HOME="$parent/state" \
	XDG_DATA_HOME="$parent/data" \
	XDG_RUNTIME_DIR="$parent/runtime" \
	TMPDIR="$parent/tmp" \
	GOCACHE="$gocache" GOMODCACHE="$gomodcache" GOPATH="$gopath" GOENV="$goenv" \
	go test "$@" || status=$?

left=$(cd "$parent" && find . -mindepth 2 \
	-path ./config/go -prune -o \
	\( -type d -empty -o ! -type d \) -print | sort)
# Empty directories a test left behind are listed too; only the sandbox's
# own top-level directories may remain.
if [ -n "$left" ]; then
	echo "test-sandbox: the tests left these files outside their temporary directories" >&2
	echo "(home=HOME, config/cache/state/data/runtime=XDG_*_HOME/DIR, tmp=TMPDIR):" >&2
	echo "$left" | sed 's/^\.\//  /' >&2
	[ "$status" -ne 0 ] || status=1
else
	echo "test-sandbox: nothing left outside the tests' temporary directories"
fi
exit "$status"
