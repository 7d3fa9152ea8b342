package sandbox

import (
	"path/filepath"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// ResolvePath resolves p as the sandbox does before judging it: relative
// to dir, ".." folded, the deepest existing ancestor canonicalised
// (symlinks followed), and the missing tail joined back.
func ResolvePath(p, dir string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	tail := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := inputs.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, tail)
		}
		if cur == "/" {
			return p
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		if _, err := inputs.Lstat(cur); err == nil {
			// A dangling link: judge the link's own path, in its
			// directory's canonical form.
			return filepath.Join(ResolvePath(filepath.Dir(cur), dir), tail)
		}
	}
}
