//go:build !linux

package linux

import (
	"fmt"
	"io"
	"runtime"

	"github.com/fence-sandbox/fence/sandbox"
)

// KernelLandlockABI is 0 off Linux.
func KernelLandlockABI() int { return 0 }

// SeccompSummary is empty off Linux.
func SeccompSummary() []string { return nil }

// UserNamespacesBlocked is false off Linux, which has no such engine.
func UserNamespacesBlocked() bool { return false }

// InFenceSandbox is false off Linux: a nested run there is not told apart.
func InFenceSandbox() bool { return false }

// Run fails off Linux.
func Run(*sandbox.Plan, *sandbox.Runtime, io.Writer) (int, error) {
	return sandbox.ExitFenceError, fmt.Errorf("the Linux sandbox cannot run on %s", runtime.GOOS)
}

// Finding is one line of `fence doctor`.
type Finding struct {
	Name   string
	OK     bool
	Detail string
}

// Doctor reports that the Linux backend does not apply off Linux.
func Doctor() []Finding {
	return []Finding{{Name: "linux backend", Detail: "not available on " + runtime.GOOS}}
}
