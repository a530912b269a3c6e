//go:build !race

package cache_test

// raceEnabled is set when the tests run with -race (see race_test.go).
const raceEnabled = false
