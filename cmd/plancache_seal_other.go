//go:build !linux

package cmd

import (
	"fmt"
	"runtime"
)

// sealKey is the plan cache's key: on Linux only, in the user's kernel
// keyring; elsewhere fence plans every run afresh.
func sealKey(bool) ([]byte, error) {
	return nil, fmt.Errorf("no plan cache on %s", runtime.GOOS)
}
