//go:build !unix

package workspace

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
