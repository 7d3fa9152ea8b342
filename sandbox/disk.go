package sandbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// Disk is what fence read of the disk while it plans one run: the
// directory listings, so that the walks that need the same tree (the
// search for repositories, then the deny globs) read each directory once,
// and the repositories found, for the after-run checks. A zero Disk is
// ready to use; nil reads the disk every time.
type Disk struct {
	dirs   map[string]listing
	stats  map[string]fs.DirEntry // path -> what lstat said, nil for missing
	denied map[string]bool        // paths lstat was refused
	real   map[string]string      // path -> canonical, see canonical
	walked map[string]walkedDir   // directory -> see linksTo
	scope  *linkScope             // see linkScope
	extra  []string               // more link trees, see AddLinkTrees
	repos  *RepoSearch
}

type listing struct {
	entries []fs.DirEntry
	err     error
}

// NewDisk returns an empty listing cache for one plan.
func NewDisk() *Disk { return &Disk{} }

// ReadDir is os.ReadDir, once per directory.
func (d *Disk) ReadDir(dir string) ([]fs.DirEntry, error) {
	if d == nil {
		return inputs.ReadDir(dir)
	}
	if l, ok := d.dirs[dir]; ok {
		return l.entries, l.err
	}
	entries, err := inputs.ReadDir(dir)
	if d.dirs == nil {
		d.dirs = map[string]listing{}
	}
	d.dirs[dir] = listing{entries, err}
	return entries, err
}

// Walk is filepath.WalkDir over the cached listings: fn sees root, then
// each entry below it in lexical order, parents first; it may return
// filepath.SkipDir or filepath.SkipAll. A directory that cannot be read
// is passed to fn a second time with the error, as WalkDir does.
func (d *Disk) Walk(root string, fn fs.WalkDirFunc) error {
	fi, err := inputs.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = d.walk(root, fs.FileInfoToDirEntry(fi), fn)
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func (d *Disk) walk(p string, e fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(p, e, nil); err != nil || !e.IsDir() {
		if errors.Is(err, filepath.SkipDir) && e.IsDir() {
			err = nil
		}
		return err
	}
	entries, err := d.ReadDir(p)
	if err != nil {
		if err := fn(p, e, err); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				err = nil
			}
			return err
		}
	}
	for _, child := range entries {
		if err := d.walk(filepath.Join(p, child.Name()), child, fn); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				break
			}
			return err
		}
	}
	return nil
}

// lookup reports whether p exists, without following a final link: from
// the listing of its directory when a walk has read it, else from one
// lstat, remembered (and a path below one known to be missing is missing
// without asking).
func (d *Disk) lookup(p string) (fs.DirEntry, bool) {
	if d == nil {
		return lstatEntry(p)
	}
	dir, name := filepath.Split(p)
	dir = filepath.Clean(dir)
	if l, ok := d.dirs[dir]; ok && l.err == nil {
		i, ok := slices.BinarySearchFunc(l.entries, name, func(e fs.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
		if !ok {
			return nil, false
		}
		return l.entries[i], true
	}
	if e, ok := d.stats[p]; ok {
		return e, e != nil
	}
	var e fs.DirEntry
	if parent, known := d.stats[dir]; !known || parent != nil {
		fi, err := inputs.Lstat(p)
		if err == nil {
			e = fs.FileInfoToDirEntry(fi)
		} else if errors.Is(err, fs.ErrPermission) {
			if d.denied == nil {
				d.denied = map[string]bool{}
			}
			d.denied[p] = true
		}
	}
	if d.stats == nil {
		d.stats = map[string]fs.DirEntry{}
	}
	d.stats[p] = e
	return e, e != nil
}

// unreachable reports whether fence was refused a look at p (a directory
// on the way it may not search).
func (d *Disk) unreachable(p string) bool {
	if d == nil {
		_, err := inputs.Lstat(p)
		return errors.Is(err, fs.ErrPermission)
	}
	return d.denied[p]
}

func lstatEntry(p string) (fs.DirEntry, bool) {
	fi, err := inputs.Lstat(p)
	if err != nil {
		return nil, false
	}
	return fs.FileInfoToDirEntry(fi), true
}

// canonical is ResolvePath(p, "/"), with each directory resolved once
// per plan: many protected paths share a few directories.
func (d *Disk) canonical(p string) string {
	p = filepath.Clean(p)
	if d == nil || p == "/" {
		return ResolvePath(p, "/")
	}
	if real, ok := d.real[p]; ok {
		return real
	}
	real := filepath.Join(d.canonical(filepath.Dir(p)), filepath.Base(p))
	if e, ok := d.lookup(real); ok && e.Type()&fs.ModeSymlink != 0 {
		real = ResolvePath(real, "/")
	}
	if d.real == nil {
		d.real = map[string]string{}
	}
	d.real[p] = real
	return real
}

// firstMissing is the first part of the canonical path p that does not
// exist: p itself, or the missing directory it would be made in.
func (d *Disk) firstMissing(p string) string {
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		if _, ok := d.lookup(parent); ok || parent == "/" {
			return p
		}
		p = parent
	}
}

// Sockets lists the unix sockets in the directories read so far.
func (d *Disk) Sockets() []string {
	if d == nil {
		return nil
	}
	var out []string
	for dir, l := range d.dirs {
		for _, e := range l.entries {
			if e.Type()&fs.ModeSocket != 0 {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

// AddLinkTrees adds trees in which a link may not lead outwards, beyond
// those of the policy: the trees earlier runs could write.
func (d *Disk) AddLinkTrees(trees []string) { d.extra = append(d.extra, trees...) }
