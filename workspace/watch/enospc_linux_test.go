//go:build linux

package watch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const enospcChildEnv = "KIMI_WATCH_ENOSPC_CHILD"

// TestWatchLimitDegrades hits the real inotify watch limit: it runs
// TestENOSPCChild in a child process inside a new user namespace, where the
// child may lower its own limit (/proc/sys/user/max_inotify_watches) to 8
// without touching the machine's.
func TestWatchLimitDegrades(t *testing.T) {
	for _, mode := range []string{"poll", "client"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestENOSPCChild$", "-test.v")
			cmd.Env = append(os.Environ(), enospcChildEnv+"="+mode)
			cmd.SysProcAttr = &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			}
			out, err := cmd.CombinedOutput()
			var pe *os.PathError
			if errors.As(err, &pe) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
				t.Skipf("this kernel does not let the test make a user namespace (%v); TestFallbackModes covers the fallbacks", err)
			}
			if err != nil || !strings.Contains(string(out), "--- PASS: TestENOSPCChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			t.Logf("child:\n%s", out)
		})
	}
}

func TestENOSPCChild(t *testing.T) {
	mode := os.Getenv(enospcChildEnv)
	if mode == "" {
		t.Skip("runs only as TestWatchLimitDegrades's child process")
	}
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("8\n"), 0o644); err != nil {
		t.Fatalf("lowering the watch limit in the user namespace: %v", err)
	}
	root := t.TempDir()
	for i := 0; i < 20; i++ {
		write(t, root, fmt.Sprintf("d%02d/f.go", i), "package d")
	}
	var calls atomic.Int32
	var cause atomic.Value
	tr := start(t, root, Options{
		PollInterval: 20 * time.Millisecond,
		OnDegraded: func(err error) bool {
			calls.Add(1)
			cause.Store(err)
			return mode == "client"
		},
	})
	if calls.Load() != 1 {
		t.Fatalf("OnDegraded called %d times, want 1", calls.Load())
	}
	if err, _ := cause.Load().(error); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("degraded because of %v, want ENOSPC", err)
	}
	if tr.Len() != 20 {
		t.Errorf("Len = %d, want all 20 files indexed despite the limit", tr.Len())
	}
	write(t, root, "d03/new.go", "package d")
	if mode == "client" {
		if tr.Mode() != ModeClient {
			t.Fatalf("Mode = %v, want client", tr.Mode())
		}
		tr.Notify(filepath.Join(root, "d03/new.go"))
	} else if tr.Mode() != ModePoll {
		t.Fatalf("Mode = %v, want poll", tr.Mode())
	}
	waitFor(t, "change seen in degraded mode", func() bool { _, ok := tr.Lookup("d03/new.go"); return ok })
	if calls.Load() != 1 {
		t.Errorf("OnDegraded called %d times, want 1", calls.Load())
	}
}
