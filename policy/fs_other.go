//go:build !unix

package policy

import "os"

// OSFS reads config files from the real filesystem.
type OSFS struct{}

// ReadFile reads path.
func (OSFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
