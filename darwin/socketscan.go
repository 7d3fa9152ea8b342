package darwin

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fence-sandbox/fence/sandbox"
)

// The host's unix sockets below writable paths: the profile lets the
// command bind and reach unix sockets there (tmux's, ssh ControlMaster's,
// a build daemon's), so every socket that already exists there when the
// run starts is the host's (a tmux server's in /tmp, a database's, the ssh
// agent's), and stays closed unless network.allowUnixSockets lists it: no
// connect, no bind, no unlink or rename over it, and no rename of a
// directory above it. fence finds them with a walk of the writable trees
// at start, within one budget for all of them; a tree the walk could not
// finish fails closed for connect and bind: every unix socket below it
// but the private TMPDIR's and the listed ones stays closed for the run
// (see hostSocketDenies for what stays open there).

// socketScanBudget bounds the walk of all writable trees together:
// entries seen and time taken. Variables, so that tests can make them small.
var (
	socketScanEntries = 500_000
	socketScanTime    = 4 * sandbox.DefaultGlobBudget
)

// socketScan is what the walk found: sockets and the trees it could not
// finish (a budget ran out, or a directory could not be read), each in
// macOS's spelling.
type socketScan struct {
	found, cut []string
	// entries and deadline are the budget's use so far, for all roots.
	entries  int
	deadline time.Time
	// private are directories a walk from above does not open (see
	// privacyDirs).
	private []string
}

// privacyDirs are the home's directories that macOS's privacy controls
// (TCC) guard: listing one from a terminal may ask the user for consent,
// or fail. A walk of the home does not open them; each is closed to unix
// sockets like a tree the walk could not finish, unless a writable rule
// names it or a path below it, which is then walked.
var privacyDirs = []string{"Desktop", "Documents", "Downloads", "Library"}

// scanSockets walks each root for unix sockets, leaving out skip (the
// private TMPDIR, which holds only the command's own), within one budget
// for all roots. A directory of private is not opened but cut, unless it
// is a root itself or lies below one. A root that does not exist holds
// none.
func scanSockets(roots, skip, private []string) socketScan {
	s := socketScan{deadline: time.Now().Add(socketScanTime), private: private}
	for _, root := range outermost(roots) {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		s.walk(real, skip)
	}
	slices.Sort(s.found)
	s.found = slices.Compact(s.found)
	return s
}

// walk scans one tree, within what is left of the budget.
func (s *socketScan) walk(root string, skip []string) {
	if s.entries >= socketScanEntries || time.Now().After(s.deadline) {
		s.cut = append(s.cut, darwinPath(root))
		return
	}
	stopped := false
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory this user cannot list may still hold a socket
			// reached by its name: closed, like an unfinished walk.
			s.cut = append(s.cut, darwinPath(p))
			return nil
		}
		if s.entries++; s.entries > socketScanEntries || s.entries%512 == 0 && time.Now().After(s.deadline) {
			stopped = true
			return filepath.SkipAll
		}
		if d.IsDir() && p != root && slices.ContainsFunc(skip, func(k string) bool { return p == k || darwinPath(p) == darwinPath(k) }) {
			return filepath.SkipDir
		}
		if d.IsDir() && p != root && slices.ContainsFunc(s.private, func(k string) bool { return strings.EqualFold(darwinPath(p), darwinPath(k)) }) {
			s.cut = append(s.cut, darwinPath(p))
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSocket != 0 {
			s.found = append(s.found, darwinPath(p))
		}
		return nil
	})
	if stopped {
		s.cut = append(s.cut, darwinPath(root))
	}
}

// outermost are the roots that lie below no other.
func outermost(roots []string) []string {
	var out []string
	for _, r := range roots {
		if !slices.ContainsFunc(roots, func(o string) bool { return o != r && under(r, o) }) {
			out = appendNew(out, r)
		}
	}
	return out
}

// scanRoots are the writable trees as the disk spells them (the rules'
// patterns and resolved spellings, a glob as its literal directory).
func scanRoots(in Input) []string {
	var out []string
	for _, r := range in.Write {
		for _, p := range append([]string{r.Pattern}, r.Resolved...) {
			if r.Glob {
				p = literalDir(p)
			}
			out = appendNew(out, p)
		}
	}
	return out
}

// socketWarnings say, in one line, which trees fail closed for unix
// sockets, and why; each tree quoted (%q), so that a name's newlines and
// control characters reach the terminal escaped.
func socketWarnings(in Input) []string {
	if len(in.SocketScanCut) == 0 {
		return nil
	}
	trees := mapList(in.SocketScanCut, func(t string) string { return strconv.Quote(t) })
	return []string{fmt.Sprintf("fence could not list every unix socket below %d tree(s) at start (a walk of at most %d entries and %s in all, or a directory it cannot read): %s; "+
		"no unix socket below them can be reached or bound in this run but the private TMPDIR's and those network.allowUnixSockets lists (list what the command needs there, or make less writable)",
		len(trees), socketScanEntries, socketScanTime, strings.Join(trees, ", "))}
}

// listedSocket reports whether a rule lists the socket at p: p is the
// rule's path or below it, or matches its glob.
func listedSocket(p string, rules []PathRule) bool {
	for _, r := range rules {
		for _, s := range r.spellings() {
			if !r.Glob && under(p, s) {
				return true
			}
			if r.Glob {
				if re, err := globRegex(s, foldNone, false); err == nil && regexp.MustCompile(re).MatchString(p) {
					return true
				}
			}
		}
	}
	return false
}
