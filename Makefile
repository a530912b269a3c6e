# The test command of README.md is `make test`; .ci/run calls it.
GO ?= go

.PHONY: test check go-test test-sandbox editor-test install bench

# Everything CI checks: formatting, vet, the Go tests with the race
# detector, and the editor tests through real clients.
test: check go-test editor-test

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

go-test:
	$(GO) test -race ./...

# The Go tests with HOME, the XDG directories and TMPDIR in empty
# directories; fails listing any file the tests left there.
test-sandbox:
	scripts/test-sandbox.sh

editor-test:
	editors/test/run.sh

# A static, pure-Go binary: no libc or dynamic loader to map at start
# (1.4 MiB less resident memory, a faster start; see bench/README.md).
install:
	CGO_ENABLED=0 $(GO) install ./cmd/kimi-lsp
