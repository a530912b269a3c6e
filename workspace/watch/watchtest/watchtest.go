//go:build linux

// Package watchtest helps tests reach the kernel's inotify watch limit
// without touching the machine's: the test binary runs one of its own tests
// again as a child process inside a new user namespace, where the child may
// lower its own limit (/proc/sys/user/max_inotify_watches).
package watchtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunChild runs the test named child (a test of the same binary) in a child
// process inside a new user namespace, with envVar=value added to its
// environment, and returns its output. It skips t when the kernel does not
// let the test make a user namespace, and fails t when the child fails or
// runs longer than two minutes.
func RunChild(t *testing.T, child, envVar, value string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+child+"$", "-test.v")
	cmd.Env = append(os.Environ(), envVar+"="+value)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	var pe *os.PathError
	if errors.As(err, &pe) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
		t.Skipf("this kernel does not let the test make a user namespace (%v)", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("child %s: %v\n%s", child, err, out)
	}
	return string(out)
}

// LowerWatchLimit sets the inotify watch limit of the child's user
// namespace to n; call it first in the child test.
func LowerWatchLimit(t *testing.T, n int) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		t.Fatalf("lowering the watch limit in the user namespace: %v", err)
	}
}
