//go:build !linux

package sandbox

import (
	"os"
	"path/filepath"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// scanDir finds the other names of the table's programs in dir.
func (t *programs) scanDir(p *policy.Policy, dir string) {
	entries, err := inputs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := inputs.Stat(path) // after symlinks
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		t.entry(p, path, e.Name(), keyOf(fi), fi.Size(), e.Type()&os.ModeSymlink != 0)
	}
}
