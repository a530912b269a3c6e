//go:build !linux

package main

// hideInBlock does nothing here: the environment block is not shown
// through /proc (see environ.go for what holds on macOS).
func hideInBlock(func(string) bool) {}

// makeNonDumpable does nothing here.
func makeNonDumpable() {}
