package cmd

import (
	"io/fs"
	"path/filepath"

	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// resolver resolves query paths exactly as sandbox.ResolvePath does, but
// remembers the resolved parent directories of one burst of queries (the
// input that arrived together), so that a thousand files in one directory
// cost one resolution of it and a lstat each. It forgets at the end of
// each burst: a link changed between two bursts is seen.
type resolver struct {
	dir  string
	dirs map[string]string
}

func newResolver(dir string) *resolver {
	return &resolver{dir: dir, dirs: map[string]string{}}
}

func (r *resolver) resolve(p string) string {
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
	} else {
		p = filepath.Join(r.dir, p)
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	real, ok := r.dirs[parent]
	if !ok {
		real = sandbox.ResolvePath(parent, r.dir)
		r.dirs[parent] = real
	}
	full := filepath.Join(real, filepath.Base(p))
	if fi, err := inputs.Lstat(full); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return sandbox.ResolvePath(full, r.dir)
	}
	return full
}

func (r *resolver) forget() { clear(r.dirs) }
