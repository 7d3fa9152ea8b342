package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// Gemini CLI's read_many_files (its "Tools" pages; the glob options are
// read from its source's behaviour, the docs being silent) turns every
// "\" of an include into "/", then globs it from the workspace
// directory case-insensitively, dot files included, and a "*" or "**"
// segment goes through a link to a directory. A link below the glob's
// fixed directory may so lead into a tree a denyRead rule hides, which
// judging that directory does not see. So fence enumerates what each
// include matches on disk, through links and without regard to case,
// and judges every file matched as a read of it (after links, as `fence
// check` resolves them). The walk has a budget, the number of entries it
// may visit and the policy's filesystem.globBudgetMs; a call whose walk
// does not end within it is refused (fail closed).

// maxGlobEntries is how many directory entries and stats the walk of a
// call's globs may make before the call is refused (a variable for the
// tests).
var maxGlobEntries = 20000

// errGlobBudget ends a walk past its budget.
var errGlobBudget = errors.New("glob walk past its budget")

// globBudget is what the walks of one call may still spend.
type globBudget struct {
	left     int
	deadline time.Time
}

// spend takes n reads off the budget, or fails past it; once past, every
// later read fails too, so the walk ends at once.
func (g *globBudget) spend(n int) error {
	g.left -= n
	if g.left >= 0 && time.Now().After(g.deadline) {
		g.left = -1
	}
	if g.left < 0 {
		return errGlobBudget
	}
	return nil
}

// spent reports whether the walks went past the budget.
func (g *globBudget) spent() bool { return g.left < 0 }

// budgetFS is a directory tree whose every read counts against a budget.
// A read refused for the budget is skipped by the walk like one the
// system refuses (Gemini skips what it cannot read); the budget, not
// the walk's error, says whether the walk was complete.
type budgetFS struct {
	fsys fs.FS
	b    *globBudget
}

// Open opens name within the budget.
func (f budgetFS) Open(name string) (fs.File, error) {
	if err := f.b.spend(1); err != nil {
		return nil, err
	}
	return f.fsys.Open(name)
}

// Stat stats name (after links) within the budget.
func (f budgetFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.b.spend(1); err != nil {
		return nil, err
	}
	return fs.Stat(f.fsys, name)
}

// ReadDir lists name within the budget, each entry counted.
func (f budgetFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.b.spend(1); err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(f.fsys, name)
	if err := f.b.spend(len(ents)); err != nil {
		return nil, err
	}
	return ents, err
}

// globMatchRefusal is the reason a read of the files the globs match,
// from each of bases, is refused (the first refused match), or "". A
// glob without a wildcard is judged as the path it names. A walk past
// its budget is refused.
func globMatchRefusal(pol *policy.Policy, res *resolver, bases, globs []string) (string, error) {
	b := &globBudget{left: maxGlobEntries, deadline: time.Now().Add(sandbox.Budget(pol))}
	for _, g := range globs {
		g = strings.ReplaceAll(g, `\`, "/")
		for _, base := range bases {
			if reason, err := pathRefusal(pol, res, "read", absFrom(base, g)); reason != "" || err != nil {
				return reason, err
			}
		}
		root, rest := globSplit(g)
		switch {
		case rest == "":
			continue
		case slices.ContainsFunc(strings.Split(rest, "/"), func(e string) bool { return e == ".." || e == "." }):
			return fmt.Sprintf("fence: denied a read of the files %q matches: fence does not follow a \".\" or \"..\" after a wildcard; write the glob without it", g), nil
		}
		for _, base := range bases {
			dir, lead := existingAncestor(absFrom(base, root))
			rest := foldedGlob(append(lead, strings.Split(rest, "/")...))
			if reason, err := walkRefusal(pol, res, budgetFS{os.DirFS(dir), b}, dir, rest); reason != "" || err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}

// walkRefusal judges every file below dir the glob rest matches.
func walkRefusal(pol *policy.Policy, res *resolver, fsys budgetFS, dir, rest string) (string, error) {
	var reason string
	err := doublestar.GlobWalk(fsys, rest, func(p string, _ fs.DirEntry) error {
		r, err := pathRefusal(pol, res, "read", dir+"/"+p)
		if err != nil {
			return err
		}
		if r != "" {
			reason = r
			return fs.SkipAll
		}
		return nil
	}, doublestar.WithCaseInsensitive(), doublestar.WithFilesOnly())
	switch {
	case reason != "":
		return reason, nil
	case fsys.b.spent():
		return fmt.Sprintf("fence: denied a read of the files %q matches below %s: listing them took more than its budget (%d entries, filesystem.globBudgetMs %d), so fence cannot tell whether one leads into a tree the policy hides; narrow the glob", rest, dir, maxGlobEntries, sandbox.Budget(pol).Milliseconds()), nil
	case errors.Is(err, doublestar.ErrBadPattern):
		return fmt.Sprintf("fence: denied a read of the files %q matches below %s: fence cannot read the glob (%v)", rest, dir, err), nil
	}
	return "", err
}

// globSplit is a glob (with "/" separators) split into its fixed
// leading directory (see globRoot) and the rest, "" for a glob with no
// wildcard.
func globSplit(g string) (string, string) {
	root := globRoot(g)
	elems := strings.Split(g, "/")
	for i, e := range elems {
		if strings.ContainsAny(e, `*?[{`) {
			return root, strings.Join(elems[i:], "/")
		}
	}
	return root, ""
}

// existingAncestor is the deepest directory at or above dir that exists
// and the elements below it that lead to dir.
func existingAncestor(dir string) (string, []string) {
	var lead []string
	for dir != "/" {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		lead = append([]string{filepath.Base(dir)}, lead...)
		dir = filepath.Dir(dir)
	}
	return dir, lead
}

// foldedGlob joins the elements of a glob, each one without a wildcard
// made one whose first letter is a class ("src" becomes "[s]rc"): the
// walk then lists its directory and matches the name without regard to
// case, as Gemini's glob does, where it would open the name as written.
func foldedGlob(elems []string) string {
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e
		if e == "" || strings.ContainsAny(e, `*?[{`) || strings.ContainsAny(e[:1], `]^!-}`) {
			continue
		}
		_, n := utf8.DecodeRuneInString(e)
		out[i] = "[" + e[:n] + "]" + e[n:]
	}
	return strings.Join(out, "/")
}

// maxLinkWalkEntries is how many directory entries the walk of a
// search's tree for links may list before the call is refused (a
// variable for the tests).
var maxLinkWalkEntries = 500000

// linkRefusal is the reason a search of root that may follow links is
// refused: a link at or below it whose target a read (a file) or a
// recursive read (a directory, see recursiveRefusal) is refused for,
// looked for below each directory a link leads to as well; or a walk
// past its budget (maxLinkWalkEntries entries, the policy's
// filesystem.globBudgetMs). What lies below root without a link in the
// way was judged with root. "" for none.
func linkRefusal(pol *policy.Policy, res *resolver, root string) (string, error) {
	b := &globBudget{left: maxLinkWalkEntries, deadline: time.Now().Add(sandbox.Budget(pol))}
	seen := map[string]bool{}
	queue := []string{root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			continue // gone, unreadable or walked: the search reads nothing more there
		}
		seen[real] = true
		ents, err := os.ReadDir(dir)
		if b.spend(1+len(ents)) != nil {
			return fmt.Sprintf("fence: denied a search of %s: looking for links below it took more than its budget (%d entries, filesystem.globBudgetMs %d), so fence cannot tell whether one leads into a tree the policy hides; search a smaller directory, or use the shell, which runs under fence", root, maxLinkWalkEntries, sandbox.Budget(pol).Milliseconds()), nil
		}
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				reason, isDir, err := linkTargetRefusal(pol, res, p)
				if reason != "" || err != nil {
					return reason, err
				}
				if isDir {
					queue = append(queue, p)
				}
			case e.IsDir():
				queue = append(queue, p)
			}
		}
	}
	return "", nil
}

// linkTargetRefusal judges what a link leads to: a read of a file, a
// recursive read of a directory; and whether it leads to a directory.
func linkTargetRefusal(pol *policy.Policy, res *resolver, link string) (string, bool, error) {
	st, err := os.Stat(link)
	if err != nil {
		return "", false, nil // dangling: it reads nothing
	}
	if !st.IsDir() {
		reason, err := pathRefusal(pol, res, "read", link)
		return reason, false, err
	}
	reason, err := recursiveRefusal(pol, res, link)
	return reason, true, err
}
