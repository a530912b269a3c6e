module github.com/kimi-lsp/kimi-lsp

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/sourcegraph/go-diff v0.10.0
	golang.org/x/sys v0.47.0
	golang.org/x/term v0.45.0
)

require github.com/google/go-cmp v0.7.0 // indirect
