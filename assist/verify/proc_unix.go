//go:build unix

package verify

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the helper in a process group of its own, so that killing
// it also kills what it started (typescript-language-server runs tsserver,
// pyright-langserver worker threads run in one node process).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the helper's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
