//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// fileStamp names a file's state, "" when it is missing (only the Linux
// backend checks an index after the run).
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
}
