//go:build !linux

package sandbox

import (
	"fmt"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// fileStamp names a file's state, "" when it is missing (only the Linux
// backend checks an index after the run).
func fileStamp(path string) string {
	fi, err := inputs.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
}
