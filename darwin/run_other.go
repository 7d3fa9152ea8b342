//go:build !darwin

package darwin

import (
	"fmt"
	"io"
	"runtime"

	"github.com/fence-sandbox/fence/sandbox"
)

// Run fails off macOS.
func Run(*sandbox.Plan, *sandbox.Runtime, io.Writer) (int, error) {
	return sandbox.ExitFenceError, fmt.Errorf("the macOS sandbox cannot run on %s", runtime.GOOS)
}
