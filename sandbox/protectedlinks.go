package sandbox

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// linkScanDepth is how deep fence looks for symlinks inside a directory
// it always protects: its entries (~/.claude/settings.json) and the
// entries of its subdirectories (~/.claude/hooks/pre.sh). Dotfiles
// managers link files one by one (GNU stow without folding, chezmoi's
// symlink mode, yadm), mostly at these depths; each level costs a
// listing of every directory in it on every run.
const linkScanDepth = 2

// LinkedProtections finds where the symlinks of the paths fence always
// protects lead: a protected path that is a link or is reached through
// links (~/.bashrc or ~/.gitconfig linked into a dotfiles repository, a
// linked ~/.config), and a link inside a protected directory, at most
// linkScanDepth levels down, that leads out of it (~/.claude/settings.json
// linked to ~/dotfiles/claude/settings.json or to a file in /tmp). The
// mounts of the plan cover a resolved path already, but the policy names
// the link: `fence check`, the hooks and the Landlock rules judge the
// target as its own path, and a link inside a protected directory is
// covered only as a link, its target open to whatever tree holds it.
// Each target that exists is returned under the rule that protects the
// link. A target that holds the working directory (the workspace, which
// the command is meant to change) or a tree a rule makes writable is left
// out.
//
// It reads the disk afresh, not through the run's Disk: fence makes its
// own directories (the record of writable trees) after the on-disk
// protections, and a listing or a miss remembered here would hide them
// from the plan.
func LinkedProtections(p *policy.Policy) []policy.LinkedPath {
	l := linkedFinder{p: p, disk: NewDisk(), seen: map[string]bool{}}
	for _, r := range p.DenyWrite {
		if r.Glob || !strings.HasPrefix(r.Key, "mandatory.") {
			continue
		}
		l.seen[r.Pattern] = true
	}
	for _, r := range p.DenyWrite {
		if r.Glob || !strings.HasPrefix(r.Key, "mandatory.") {
			continue
		}
		l.rule(r)
	}
	return l.out
}

type linkedFinder struct {
	p    *policy.Policy
	disk *Disk
	seen map[string]bool // paths protected already, or added
	out  []policy.LinkedPath
}

// rule adds what r's path leads to, and the targets of the links inside
// it when it is a directory.
func (l *linkedFinder) rule(r policy.Rule) {
	real := l.disk.canonical(r.Pattern)
	e, ok := l.disk.lookup(real)
	if !ok || e.Type()&fs.ModeSymlink != 0 {
		return // missing, or a link that leads nowhere: the plan watches it
	}
	if real != r.Pattern {
		l.add(r, r.Pattern, real)
	}
	if e.IsDir() {
		l.scan(r, real, real, linkScanDepth)
	}
}

// scan adds the targets of the links in dir, below the protected
// directory top, that lead out of top, looking depth levels down.
func (l *linkedFinder) scan(r policy.Rule, top, dir string, depth int) {
	entries, err := l.disk.ReadDir(dir)
	if err != nil {
		return // unlistable: the plan covers what it cannot see whole
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			real := l.disk.canonical(p)
			if t, ok := l.disk.lookup(real); ok && t.Type()&fs.ModeSymlink == 0 && !under(real, top) {
				l.add(r, p, real)
			}
		case e.IsDir() && depth > 1:
			l.scan(r, top, p, depth-1)
		}
	}
}

// add records real, where link leads, under r, unless it is protected
// already, or holds the working directory or a tree a rule makes
// writable: a link to the home or to /tmp would take from the run what
// its policy gives it, while what a rule names is the user's to open.
func (l *linkedFinder) add(r policy.Rule, link, real string) {
	if l.seen[real] || l.p.Dir != "" && under(l.p.Dir, real) || slices.ContainsFunc(l.p.Write, func(w policy.Rule) bool {
		if w.Glob {
			return under(literalPrefix(w.Pattern), real)
		}
		return under(w.Pattern, real)
	}) {
		return
	}
	l.seen[real] = true
	l.out = append(l.out, policy.LinkedPath{Path: real, Link: link, Key: r.Key, Origin: r.Origin})
}
