package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// TempTrees are writable by every user: a link in them could be anyone's.
var TempTrees = []string{"/tmp", "/var/tmp", "/dev/shm"}

// LinkError is a symlink that lies in a tree the sandbox could write and
// leads out of it: a link the sandbox could have planted, which fence
// never lets widen a run.
type LinkError struct {
	Path   string // the path being resolved
	Link   string // the link on the way
	Target string // where it leads, resolved
	Tree   string // the writable tree the link lies in
	// Untrusted, for a link on the way to the home or the working
	// directory, says why fence did not take it as the caller's own.
	Untrusted string
}

func (e *LinkError) Error() string {
	where := "outside it"
	if under(e.Target, e.Tree) {
		where = "outside every tree this run may write"
	}
	if e.Untrusted != "" {
		return fmt.Sprintf("%s leads through %s, a symlink in %s to %s, %s, and %s, so it grants nothing there: "+
			"a link another user, or a sandbox, could have made never widens a run (name the target itself if you mean it)", e.Path, e.Link, e.Tree, e.Target, where, e.Untrusted)
	}
	return fmt.Sprintf("%s leads through %s, a symlink in %s (a tree a sandbox could write) to %s, %s, so it grants nothing there: "+
		"a link a sandbox could have planted never widens a run (name the target itself if you mean it)", e.Path, e.Link, e.Tree, e.Target, where)
}

// testOnlyNoSharedTrees leaves the templates' trees and the temporary
// directories out of linkTrees, for tests whose trees lie in /tmp.
var testOnlyNoSharedTrees = false

// errLoop is too many links on the way, as the kernel's ELOOP.
var errLoop = errors.New("too many levels of symbolic links")

// linkScope says where links may lead. trees are the trees in which a
// symlink may not lead outwards, since a sandboxed run could have planted
// it there: the trees p lets the command write; every tree an earlier run
// could write (extra); the working directory, the repository around it
// and each directory above it the caller may write, below the top level
// and short of the home (a run in any of them, with "." writable, could
// have made the link); the trees the builtin templates make writable;
// and the temporary directories. own are the trees this run may write:
// a link in a tree that is not one of them must also lead into one of
// them, or it would widen this run (~/.cache made a link to the home by a
// run that could write the home). Each is given as written and, where
// its own path holds links that may be followed, resolved.
type linkScope struct {
	trees, own []string
	disk       *Disk // the listings to resolve with; nil reads the disk
	// callers are the caller's own links (see callerLinks), followed
	// wherever they lead; untrusted says why each other link on the
	// caller's spellings was not taken as one.
	callers   map[string]bool
	untrusted map[string]string
}

func linkTrees(p *policy.Policy, extra []string, disk *Disk) linkScope {
	var own []string
	for _, r := range p.Write {
		if r.Glob {
			own = append(own, literalPrefix(r.Pattern))
		} else {
			own = append(own, r.Pattern)
		}
	}
	suspect := []string{p.Dir, policy.WorkspaceRoot(p.Dir)}
	for d := filepath.Dir(p.Dir); strings.Count(d, "/") > 1 && !under(p.Home, d) && writableByCaller(d); d = filepath.Dir(d) {
		suspect = append(suspect, d)
	}
	if !testOnlyNoSharedTrees {
		suspect = append(suspect, policy.TemplateWriteTrees(p.Home)...)
		suspect = append(suspect, TempTrees...)
	}
	suspect = append(suspect, extra...)
	callers, untrusted := callerLinks(p, disk)
	first := linkScope{trees: slices.Concat(own, suspect), own: own, disk: disk, callers: callers, untrusted: untrusted}
	scope := linkScope{trees: slices.Clone(first.trees), own: slices.Clone(own), disk: disk, callers: callers, untrusted: untrusted}
	for i, t := range first.trees {
		real, err := guardedResolve(t, first)
		if err != nil || real == t {
			continue
		}
		scope.trees = append(scope.trees, real)
		if i < len(own) {
			scope.own = append(scope.own, real)
		}
	}
	return scope
}

// GuardLinks resolves the symlinks of p's allow rules and of its working
// directory, so that the sandbox and `fence check` judge the same paths
// (disk, which may be nil, keeps the trees for the plan),
// and drops an allow rule whose path leads out of a writable tree through
// a link in it, returning why. A working directory reached that way is an
// error: every rule relative to it would be.
func GuardLinks(p *policy.Policy, disk *Disk) (dropped []string, err error) {
	trees := disk.linkScope(p)
	if _, err := guardedResolve(p.Dir, trees); err != nil {
		return nil, fmt.Errorf("the working directory: %w; cd to the directory itself if you mean to work there", err)
	}
	guard := func(rules []policy.Rule) []policy.Rule {
		out := rules[:0]
		for _, r := range rules {
			if !r.Glob {
				real, err := guardedResolve(r.Pattern, trees)
				if err != nil {
					dropped = append(dropped, fmt.Sprintf("%s: %v", r.Origin, err))
					continue
				}
				r.Pattern = real
			}
			out = append(out, r)
		}
		return out
	}
	p.Write, p.Read, p.Execute, p.UnixSockets = guard(p.Write), guard(p.Read), guard(p.Execute), guard(p.UnixSockets)
	return dropped, nil
}

// guardedResolve resolves the symlinks of the absolute path p, as
// filepath.EvalSymlinks does, except that a link lying in one of
// scope's trees must lead inside that same tree, and, when that tree is
// not one this run may write, into one that is. A missing tail is
// joined back as it is written.
func guardedResolve(p string, scope linkScope) (string, error) {
	return scope.disk.resolveLinks("/", p, nil, func(l linkSeen, dir, real string) error {
		tree, ok := containingTree(dir, scope.trees)
		if !ok || scope.allows(tree, real) {
			return nil
		}
		why := scope.untrusted[l.path]
		if scope.callers[l.path] {
			if temp, in := tempTreeOf(dir); in && tree == temp && under(real, temp) {
				return nil
			}
			why = "a link of yours on the way to the home or the working directory is followed only where it lies in a temporary directory outside every tree a sandbox could write, and stays inside it"
		}
		return &LinkError{Path: p, Link: l.path, Target: real, Tree: tree, Untrusted: why}
	})
}

// linkSeen is a symlink met while resolving a path, at its canonical
// place, with what it says.
type linkSeen struct {
	path, target string
	up           bool // not a link: a directory a ".." climbs out of
}

// resolveLinks resolves rel from the canonical directory start as the
// kernel does (a missing tail joined back as written),
// with listings from d, and calls onLink for each symlink on the way,
// with the directory it lies in and where it leads, resolved; an error
// from onLink stops the walk. onUp, when set, hears of each directory a
// ".." leaves: the kernel climbs from what it is, so it must stay what it
// is.
func (d *Disk) resolveLinks(start, rel string, onUp func(dir string), onLink func(l linkSeen, dir, real string) error) (string, error) {
	hops := 0
	var walk func(dir string, rest []string) (string, error)
	walk = func(dir string, rest []string) (string, error) {
		for i, name := range rest {
			switch name {
			case "", ".":
				continue
			case "..":
				if onUp != nil {
					onUp(dir)
				}
				dir = filepath.Dir(dir)
				continue
			}
			next := filepath.Join(dir, name)
			e, ok := d.lookup(next)
			if !ok {
				return filepath.Join(append([]string{next}, rest[i+1:]...)...), nil
			}
			if e.Type()&fs.ModeSymlink == 0 {
				dir = next
				continue
			}
			if hops++; hops > 40 {
				return "", fmt.Errorf("resolve %q: %w", filepath.Join(start, rel), errLoop)
			}
			target, err := inputs.Readlink(next)
			if err != nil {
				return "", fmt.Errorf("resolve %q: %w", filepath.Join(start, rel), err)
			}
			// The target's own ".." are taken as the kernel takes them,
			// from the directory reached so far, not by cleaning the text.
			from := dir
			if filepath.IsAbs(target) {
				from = "/"
			}
			real, err := walk(from, strings.Split(target, "/"))
			if err != nil {
				return "", err
			}
			if err := onLink(linkSeen{path: next, target: target}, dir, real); err != nil {
				return "", err
			}
			dir = real
		}
		return dir, nil
	}
	return walk(start, strings.Split(filepath.Clean(rel), "/"))
}

// allows reports whether a link in tree may lead to real: inside the
// tree, and, for a tree this run may not write, into one it may.
func (s linkScope) allows(tree, real string) bool {
	if !under(real, tree) {
		return false
	}
	return slices.Contains(s.own, tree) || slices.ContainsFunc(s.own, func(o string) bool { return under(real, o) })
}

// containingTree is the innermost of trees that holds dir: the one the
// link lies in. (A link in a writable tree nested in another may not lead
// to the outer one either: the rule is kept simple and strict.)
func containingTree(dir string, trees []string) (string, bool) {
	best, found := "", false
	for _, t := range trees {
		if under(dir, t) && len(t) >= len(best) {
			best, found = t, true
		}
	}
	return best, found
}

// linkScope is linkTrees(p) with the extra trees, computed once per
// Disk: p's writable trees are resolved by GuardLinks, and the plan's glob
// matches are guarded with the same scope.
func (d *Disk) linkScope(p *policy.Policy) linkScope {
	if d == nil {
		return linkTrees(p, nil, nil)
	}
	if d.scope == nil {
		s := linkTrees(p, d.extra, d)
		d.scope = &s
	}
	return *d.scope
}

// landing is where p leads: its links resolved, a missing tail as
// written; for a link whose target does not exist yet, that target.
func (d *Disk) landing(p string) string {
	end, err := d.resolveLinks("/", p, nil, func(linkSeen, string, string) error { return nil })
	if err != nil {
		return d.canonical(p)
	}
	return end
}
