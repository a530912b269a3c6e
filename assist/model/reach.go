package model

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// ErrNotAPI: the endpoint answered, but not as the chat-completions API
// does — a web page, or a body that is neither an event stream nor JSON.
// baseURL most likely points at a website or at the wrong path.
var ErrNotAPI = errors.New("the endpoint answered a web page, not the API")

// ConnKind is why a request could not reach the endpoint.
type ConnKind int

// The kinds of connection failure ConnError tells apart.
const (
	ConnOther   ConnKind = iota // any other transport failure
	ConnRefused                 // nothing listens at the host and port
	ConnDNS                     // the host name does not resolve
	ConnTLS                     // the TLS handshake or certificate failed
	ConnReset                   // the connection was closed before a reply
)

// ConnError is a request that never got an HTTP reply: it says what
// happened in words, which endpoint, and what to check. Unwrap returns the
// transport error (a *url.Error), so errors.Is(err, syscall.ECONNREFUSED)
// still holds.
type ConnError struct {
	Kind ConnKind
	// URL is the endpoint, redacted.
	URL string
	// Where says where baseURL came from (Options.BaseURLSource); empty
	// for the fallback URL, which is the program's own.
	Where string
	// After is the endpoint that failed before this one, when URL is the
	// fallback.
	After string
	Err   error
}

func (e *ConnError) Error() string {
	host := e.URL
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	url := e.URL
	if e.After != "" {
		url += " (the fallback, after " + e.After + ")"
	}
	// The program's own endpoints (the default, the fallback) have no typo
	// to look for: the network is what to check.
	own := e.Where == "" || e.Where == "default"
	check := checkBaseURL(e.Where)
	switch e.Kind {
	case ConnRefused:
		return fmt.Sprintf("could not connect to %s: connection refused (nothing listens at %s): is the server running? %s", url, host, check)
	case ConnDNS:
		if own {
			return fmt.Sprintf("could not connect to %s: the host name %q was not found (DNS lookup failed): check the network, its DNS, and HTTPS_PROXY", url, hostname(host))
		}
		return fmt.Sprintf("could not connect to %s: the host name %q was not found (DNS lookup failed): %s for a typo, and the network", url, hostname(host), check)
	case ConnTLS:
		return fmt.Sprintf("could not connect to %s: the TLS (https) handshake failed (%s): a server that speaks plain http needs an http:// baseURL; a proxy that inspects TLS needs its certificate installed; %s", url, tlsReason(e.Err), check)
	case ConnReset:
		return fmt.Sprintf("could not get a reply from %s: the connection was closed before the server answered (%s): %s, and HTTPS_PROXY", url, innermost(e.Err), check)
	}
	return fmt.Sprintf("could not reach %s (%s): check the network, HTTPS_PROXY, and baseURL%s", url, innermost(e.Err), where(e.Where))
}

func (e *ConnError) Unwrap() error { return e.Err }

// checkBaseURL is "check baseURL (set by …)".
func checkBaseURL(src string) string { return "check baseURL" + where(src) }

// where is " (set by SOURCE)", " (the default)" or "".
func where(src string) string {
	switch src {
	case "":
		return ""
	case "default":
		return " (the default)"
	}
	return " (set by " + src + ")"
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// classifyConn turns a transport error of http.Client.Do into a ConnError;
// timeouts are left to the caller (they wrap ErrTimeout).
func classifyConn(err error, shown, src string) error {
	kind := ConnOther
	var dns *net.DNSError
	var rec tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		kind = ConnRefused
	case errors.As(err, &dns):
		kind = ConnDNS
	case errors.As(err, &rec), errors.As(err, &cert), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		kind = ConnTLS
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), strings.Contains(err.Error(), "EOF"):
		kind = ConnReset
	}
	return &ConnError{Kind: kind, URL: shown, Where: src, Err: err}
}

// tlsReason is the TLS failure in a few words.
func tlsReason(err error) string {
	var rec tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return "the server answered in plain http, not TLS"
	case errors.As(err, &rec):
		return "the server did not answer in TLS"
	case errors.As(err, &unknownCA):
		return "the server's certificate is signed by an authority this system does not trust"
	case errors.As(err, &hostErr):
		return "the server's certificate is for another host name"
	case errors.As(err, &invalid):
		return "the server's certificate is not valid: " + invalid.Error()
	}
	return innermost(err)
}

// innermost is the text of the deepest error of err's chain, without Go's
// `Post "URL": dial tcp ADDR:` prefixes.
func innermost(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return err.Error()
}

// NotAPIError is a 2xx reply that is not the API's: a web page, or a body of
// another type. It wraps ErrNotAPI.
type NotAPIError struct {
	// URL is the endpoint, redacted.
	URL string
	// Where says where baseURL came from.
	Where string
	// ContentType is the reply's media type; Title the page's <title>, if any.
	ContentType, Title string
	// Status is the HTTP status.
	Status int
}

func (e *NotAPIError) Error() string {
	what := "a web page"
	if !isHTML(e.ContentType) {
		what = "a reply of type " + cmpOr(e.ContentType, "unknown")
	}
	title := ""
	if e.Title != "" {
		title = fmt.Sprintf(" titled %q", e.Title)
	}
	first := ErrNotAPI.Error()
	if !isHTML(e.ContentType) {
		first = "the endpoint did not answer as the chat-completions API"
	}
	return fmt.Sprintf("%s: %s sent %s%s (HTTP %d) where an event stream or JSON was expected: %s; it should be the API's address, such as %s or http://localhost:PORT/v1",
		first, e.URL, what, title, e.Status, checkBaseURL(e.Where), DefaultBaseURL)
}

func (e *NotAPIError) Unwrap() error { return ErrNotAPI }

func isHTML(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// titleRE is compiled on first use (a web page where the API should be),
// not at every start.
var titleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>([^<]{1,200})</title>`) })

// pageTitle returns the <title> of an HTML page's start, or "".
func pageTitle(b []byte) string {
	m := titleRE().FindSubmatch(b)
	if m == nil {
		return ""
	}
	return strings.Join(strings.Fields(string(m[1])), " ")
}

// looksHTML reports whether a body starts like an HTML document.
func looksHTML(b []byte) bool {
	s := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 64)])))
	return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html") || strings.HasPrefix(s, "<head") || strings.HasPrefix(s, "<body")
}

// Brief is a few words on why an attempt failed, for a status line while
// the call goes on ("connection refused; trying again").
func Brief(err error) string {
	var ce *ConnError
	var api *APIError
	switch {
	case errors.As(err, &ce):
		switch ce.Kind {
		case ConnRefused:
			return "connection refused"
		case ConnDNS:
			return "host not found"
		case ConnTLS:
			return "TLS handshake failed"
		case ConnReset:
			return "connection closed"
		}
		return "could not connect"
	case errors.Is(err, ErrTimeout):
		return "no reply in time"
	case errors.As(err, &api) && api.StatusCode != 0:
		return fmt.Sprintf("HTTP %d", api.StatusCode)
	case err == nil:
		return "no reply yet"
	}
	return "the attempt failed"
}
