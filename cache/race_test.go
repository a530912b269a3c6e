//go:build race

package cache_test

// raceEnabled is set when the tests run with -race, which makes the replay
// benchmark several times slower; it then replays a shorter session.
const raceEnabled = true
