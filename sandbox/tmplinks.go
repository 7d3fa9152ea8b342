package sandbox

import (
	"fmt"
	"slices"

	"github.com/fence-sandbox/fence/policy"
)

// realDir is the working directory with its links resolved as the
// rules' are; as it is written when a link on the way is refused (the
// run is refused then too, see GuardLinks).
func (b *builder) realDir() string {
	real, err := guardedResolve(b.pol.Dir, *b.linkScope())
	if err != nil {
		return b.pol.Dir
	}
	return real
}

// spelling is a path as the caller or a rule wrote it, with why it is
// there.
type spelling struct{ path, why string }

// spellings are the paths whose links the private /tmp makes again: the
// working directory and the home as the caller spells them, and every
// plain allow rule as written.
func (b *builder) spellings() []spelling {
	out := []spelling{{b.pol.Dir, "the working directory"}}
	if b.pol.Home != "" {
		out = append(out, spelling{b.pol.Home, "the home"})
	}
	for _, r := range slices.Concat(b.pol.Write, b.pol.Read, b.pol.Execute, b.pol.UnixSockets) {
		if r.Text != "" && !r.Glob {
			out = append(out, spelling{policy.Expand(r.Text, b.pol.Dir, b.pol.Home), r.Origin})
		}
	}
	return out
}

// tmpLinks are the symlinks below /tmp on the way to each spelling that
// leads somewhere the policy grants (guardedResolve: a link only the
// caller could have made, or one that stays inside the trees this run
// may write), except those inside a bind, which the bind brings along.
// Made again in the private /tmp, they point where they point on the
// host; they grant nothing themselves: what they lead to is bound, and
// checked by Landlock, at its own path.
func (b *builder) tmpLinks(binds []Bind) []Link {
	scope := b.linkScope()
	var out []Link
	seen := map[string]bool{}
	for _, s := range b.spellings() {
		if !under(s.path, "/tmp") {
			continue
		}
		if _, err := guardedResolve(s.path, *scope); err != nil {
			continue
		}
		b.m.disk.resolveLinks("/", s.path, nil, func(l linkSeen, _, _ string) error {
			// A link inside a bind comes with it; one with a bind below it
			// cannot be (a bind's path has no link on its way), and would
			// lead the bind's mount point elsewhere.
			inBind := slices.ContainsFunc(binds, func(x Bind) bool { return under(l.path, x.Path) || under(x.Path, l.path) })
			if seen[l.path] || !under(l.path, "/tmp") || l.path == "/tmp" || inBind {
				return nil
			}
			seen[l.path] = true
			why := fmt.Sprintf("a symlink on the way to %s (%s)", s.path, s.why)
			if scope.callers[l.path] {
				why += ", followed as yours: you own it, only you or root can change the directories on its way, and it lies in no tree a sandbox could write and leads inside its temporary directory"
			}
			out = append(out, Link{Path: l.path, Target: l.target, Kind: KindTmpLink, Why: why})
			return nil
		})
	}
	sortByDepth(out, func(l Link) string { return l.Path })
	return out
}
