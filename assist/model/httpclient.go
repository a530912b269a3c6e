package model

import (
	"net/http"
	"time"
)

// NewHTTPClient returns the HTTP client a Client makes for itself when
// Options.HTTPClient is nil (proxies from the environment, connectTimeout
// for TCP and TLS, keep-alive connection reuse, no total timeout; 0 means
// DefaultConnectTimeout). A caller that replaces its Client when the
// configuration changes passes the same HTTP client to every new Client, so
// the pooled connections survive the change.
func NewHTTPClient(connectTimeout time.Duration) *http.Client {
	if connectTimeout == 0 {
		connectTimeout = DefaultConnectTimeout
	}
	return newHTTPClient(connectTimeout)
}
