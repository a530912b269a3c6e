package main

import (
	"fmt"
	"regexp"
	"strings"
)

// file is a file the user edits over a session: step returns, for round
// i, the text after the user's burst (one contiguous change of text) and
// after the next edit that follows from it (the stand-in's answer).
type file struct {
	name string
	base string
	step func(text string, i int) (burst, next string)
}

// files are the session's files: renames, added fields, changed call
// signatures, in Go and Python.
var files = []file{
	{"retry.go", retryGo, rename("attempts", `\(ctx context.Context, `, " int, wait")},
	{"server.go", serverGo, field("\t%s int\n}\n\n// NewServer", "}\n\n// NewServer", "\t\t%s: %d,\n\t}\n}\n\n// String", "\t}\n}\n\n// String")},
	{"cache.go", cacheGo, param("Put(k string, v []byte", ", ttl%d int", []string{"c.Put(k, v", "to.Put(k, v"}, ", 0")},
	{"report.py", reportPy, rename("rows", "def write_report\\(", ", out_path")},
	{"user.py", userPy, field(", %s=None):\n        self.name", "):\n        self.name", "\n        self.%s = %[1]s\n\n    def __repr__", "\n\n    def __repr__")},
	{"client.py", clientPy, param("def get_json(url, timeout", ", opt%d=None", []string{"/users/{uid}\", 10", "/users/{uid}/repos\", 10"}, ", None")},
}

// names are the successive names of a renamed parameter.
var names = []string{"tries", "count", "limit", "budget", "times", "reps", "rounds", "quota", "cap", "tally", "steps", "spins"}

// rename renames the parameter first declared as first, between the
// text matched by before and after in the signature, and its uses.
func rename(first, before, after string) func(string, int) (string, string) {
	return func(text string, i int) (string, string) {
		old := first
		if i > 0 {
			old = names[(i-1)%len(names)]
		}
		neu := names[i%len(names)]
		sig := regexp.MustCompile(before + regexp.QuoteMeta(old) + regexp.QuoteMeta(after))
		loc := sig.FindStringIndex(text)
		if loc == nil {
			return text, text
		}
		m := text[loc[0]:loc[1]]
		burst := text[:loc[0]] + strings.Replace(m, old, neu, 1) + text[loc[1]:]
		all := append([]string{first}, names...)
		word := regexp.MustCompile(`\b(` + strings.Join(all, "|") + `)\b`)
		lineEnd := loc[1] + strings.IndexByte(burst[loc[1]:], '\n')
		next := burst[:lineEnd] + word.ReplaceAllString(burst[lineEnd:], neu)
		return burst, next
	}
}

// field adds a field: decl (a format of the field's name) replaces
// declAt, and init (of the name and a value) replaces initAt.
func field(decl, declAt, init, initAt string) func(string, int) (string, string) {
	return func(text string, i int) (string, string) {
		name := fmt.Sprintf("Extra%d", i)
		if strings.HasSuffix(initAt, "__repr__") {
			name = fmt.Sprintf("extra%d", i)
		}
		burst := strings.Replace(text, declAt, fmt.Sprintf(decl, name), 1)
		var next string
		if strings.Contains(init, "%d") {
			next = strings.Replace(burst, initAt, fmt.Sprintf(init, name, i), 1)
		} else {
			next = strings.Replace(burst, initAt, fmt.Sprintf(init, name), 1)
		}
		return burst, next
	}
}

// param adds a parameter (a format of i) after sig, and arg to every call
// that starts with one of calls (followed by the arguments added so far).
func param(sig, add string, calls []string, arg string) func(string, int) (string, string) {
	return func(text string, i int) (string, string) {
		var have strings.Builder
		for j := range i {
			have.WriteString(fmt.Sprintf(add, j))
		}
		at := sig + have.String()
		burst := strings.Replace(text, at, at+fmt.Sprintf(add, i), 1)
		next := burst
		for _, c := range calls {
			c += strings.Repeat(arg, i)
			next = strings.Replace(next, c+")", c+arg+")", 1)
		}
		return burst, next
	}
}

const retryGo = `package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrGaveUp is returned when every attempt failed.
var ErrGaveUp = errors.New("fetch: gave up")

// Retry calls do until it succeeds, waiting longer after each failure.
func Retry(ctx context.Context, attempts int, wait time.Duration, do func(context.Context) (*http.Response, error)) (*http.Response, error) {
	var last error
	for i := 0; i < attempts; i++ {
		resp, err := do(ctx)
		if err == nil {
			return resp, nil
		}
		last = err
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait *= 2
	}
	return nil, fmt.Errorf("%w after %d attempts: %w", ErrGaveUp, attempts, last)
}
`

const serverGo = `package config

import (
	"fmt"
	"time"
)

// Server is one upstream server.
type Server struct {
	Name    string
	Addr    string
	Timeout time.Duration
}

// NewServer returns a server with the default timeout.
func NewServer(name, addr string) *Server {
	return &Server{
		Name:    name,
		Addr:    addr,
		Timeout: 30 * time.Second,
	}
}

// String describes the server for logs.
func (s *Server) String() string {
	return fmt.Sprintf("%s at %s (timeout %v)", s.Name, s.Addr, s.Timeout)
}
`

const cacheGo = `package store

import "sync"

// Cache keeps values by key.
type Cache struct {
	mu    sync.Mutex
	items map[string][]byte
}

// Put stores v under k.
func (c *Cache) Put(k string, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = v
}

// Warm fills the cache from src.
func Warm(c *Cache, src map[string][]byte) {
	for k, v := range src {
		c.Put(k, v)
	}
}

// Copy puts every value of from into to.
func Copy(to, from *Cache) {
	from.mu.Lock()
	defer from.mu.Unlock()
	for k, v := range from.items {
		to.Put(k, v)
	}
}
`

const reportPy = `import csv
from pathlib import Path


def write_report(rows, out_path, delimiter=","):
    """Write rows (dicts) to out_path as CSV, header first."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=sorted(rows[0]), delimiter=delimiter)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return out
`

const userPy = `from dataclasses import dataclass


class User:
    def __init__(self, name, email):
        self.name = name
        self.email = email

    def __repr__(self):
        return f"User(name={self.name!r}, email={self.email!r})"

    def to_dict(self):
        return {"name": self.name, "email": self.email}
`

const clientPy = `import json
import urllib.request


def get_json(url, timeout):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.load(resp)


def user(base, uid):
    return get_json(f"{base}/users/{uid}", 10)


def repos(base, uid):
    return get_json(f"{base}/users/{uid}/repos", 10)
`
