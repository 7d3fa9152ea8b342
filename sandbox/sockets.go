package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// A pathname unix socket is reachable through a read-only mount
// (connect is not a write to the file system), so the sandbox hides
// every socket of the host that network.allowUnixSockets does not list.
// fence finds them at start:
//
//   - in /proc/net/unix, every socket bound in fence's network namespace,
//     wherever it lies (a tmux server's in /tmp, an editor's in $HOME,
//     a database's under /var);
//   - below SocketRoots, for sockets bound in another network namespace
//     and bind-mounted in (docker.sock in a CI container);
//   - $SSH_AUTH_SOCK, through its link;
//   - beside each of those, in its directory;
//   - on the plan's walks of the writable trees.
//
// A socket bound after the start, bound by a relative path or in another
// namespace out of those places, or reached by a path fence did not see
// (a hard link, a second mount of its directory), is not hidden:
// Landlock ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) refuses those where
// the kernel has it.

// SocketRoots are where fence also walks for the host's unix sockets.
var SocketRoots = []string{"/run", "/var/run"}

// ProcNetUnix is the kernel's table of unix sockets; a variable so that
// tests can give their own.
var ProcNetUnix = "/proc/net/unix"

// socketDepth bounds the walk below each of SocketRoots.
const socketDepth = 4

// MaxHiddenSockets bounds the masks of host sockets, one mount each: a
// host with more fails closed rather than start slowly or run out of
// mounts.
var MaxHiddenSockets = 4096

// FindHostSockets lists the pathname unix sockets of the host that the
// command could connect to, each by its canonical path, sorted. Beside
// each one the kernel's table names, the other sockets in its directory
// are taken too: a server that binds a temporary name and links it into
// place (ssh's ControlMaster) leaves only the dead name in the table.
// A socket counts when this user may connect to it or owns it (the
// command could chmod it), or when its directory cannot be searched
// (the sandbox's init, which masks, judges those again). seen are more
// sockets to judge: those met on the plan's walks of the writable trees,
// where a socket bound in another network namespace, or one whose
// directory was renamed since it was bound, is found by what it is.
func FindHostSockets(environ, seen []string) ([]string, error) {
	found, err := tableSockets()
	if err != nil && runtime.GOOS != "linux" {
		return nil, nil // no mounts to mask with: the backend keeps sockets out its own way
	}
	if err != nil {
		return nil, fmt.Errorf("list the host's unix sockets: %w", err)
	}
	inputs.Note(opSockets, ProcNetUnix, socketsSeen(found, err))
	found = append(append(found, walkSockets()...), seen...)
	for _, kv := range environ {
		if p, ok := strings.CutPrefix(kv, "SSH_AUTH_SOCK="); ok && filepath.IsAbs(p) {
			found = append(found, p)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	r := socketResolver{dirs: map[string]string{}, listed: map[string]bool{}, judged: map[string]bool{}}
	var out []string
	for _, p := range found {
		if c, ok := r.canonical(p); ok {
			out = append(append(out, r.judge(c)...), r.beside(filepath.Dir(c))...)
		}
	}
	slices.Sort(out)
	return out, nil
}

// tooManySockets is the error for more hidden sockets than
// MaxHiddenSockets.
func tooManySockets(hidden []string) error {
	return fmt.Errorf("the host has %d unix sockets the command could reach and the policy does not list (most in %s), more than the %d fence masks: list the directories whose sockets the command may connect to in network.allowUnixSockets, or set network.allowAllUnixSockets", len(hidden), busiestDir(hidden), MaxHiddenSockets)
}

// boundSockets reads the absolute paths of /proc/net/unix. A line is
// "Num: RefCount Protocol Flags Type St Inode Path"; abstract names
// start with "@" and relative ones cannot be found, so both are left
// out. A path with a newline in it breaks its line: what comes of it is
// checked to be a socket before it is used.
// opSockets observes the pathname sockets of the kernel's table (not the
// table itself, whose other lines change with every connection).
const opSockets = "sockets"

func init() {
	inputs.Register(opSockets, func(string) string { return socketsSeen(tableSockets()) })
}

// tableSockets are the pathname sockets of ProcNetUnix.
func tableSockets() ([]string, error) {
	f, err := os.Open(ProcNetUnix) // observed: as opSockets
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return boundSockets(f), nil
}

// socketsSeen digests the socket paths found, in order.
func socketsSeen(found []string, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	s := slices.Clone(found)
	slices.Sort(s)
	return inputs.Digest([]byte(strings.Join(slices.Compact(s), "\x00")))
}

func boundSockets(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			continue // the header
		}
		if p, ok := socketPath(sc.Text()); ok {
			out = append(out, p)
		}
	}
	return out
}

// socketPath returns the path at the end of one line of /proc/net/unix.
func socketPath(line string) (string, bool) {
	rest := line
	for range 7 {
		rest = strings.TrimLeft(rest, " ")
		_, after, ok := strings.Cut(rest, " ")
		if !ok {
			return "", false
		}
		rest = after
	}
	if !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest, true
}

// walkSockets lists the sockets below SocketRoots.
func walkSockets() []string {
	var found []string
	walked := map[string]bool{}
	for _, root := range SocketRoots {
		real, err := inputs.EvalSymlinks(root)
		if err != nil || walked[real] {
			continue // /var/run is usually /run
		}
		walked[real] = true
		inputs.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && strings.Count(strings.TrimPrefix(p, real), "/") >= socketDepth:
				return filepath.SkipDir
			case d.Type()&fs.ModeSocket != 0:
				found = append(found, p)
			}
			return nil
		})
	}
	return found
}

// socketResolver finds the canonical paths of sockets, caching the
// canonical path of each directory ("" for one that cannot be resolved)
// and which directories it has listed.
type socketResolver struct {
	dirs   map[string]string
	listed map[string]bool
	judged map[string]bool
}

// judge returns c when the command could reach it, once per path.
func (r *socketResolver) judge(c string) []string {
	if r.judged[c] {
		return nil
	}
	r.judged[c] = true
	if r.mayReach(c) {
		return []string{c}
	}
	return nil
}

// canonical resolves p as the kernel did when it bound it: the directory
// physically (a "link/.." in it is the link's target's parent, which a
// lexical clean would get wrong), and a last component that is a link
// ($SSH_AUTH_SOCK often is) through the link.
func (r *socketResolver) canonical(p string) (string, bool) {
	i := strings.LastIndexByte(p, '/')
	parent, base := p[:max(i, 1)], p[i+1:]
	dir, seen := r.dirs[parent]
	if !seen {
		dir, _ = inputs.EvalSymlinks(parent)
		r.dirs[parent] = dir
	}
	if dir == "" || base == "" || base == "." || base == ".." {
		return "", false
	}
	c := filepath.Join(dir, base)
	if fi, err := inputs.Lstat(c); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if c, err = inputs.EvalSymlinks(c); err != nil {
			return "", false
		}
	}
	return c, true
}

// mayReach reports whether the command could connect to the socket at
// the canonical path c, as far as this user can tell.
func (r *socketResolver) mayReach(c string) bool {
	fi, err := inputs.Lstat(c)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return true // a directory on the way is closed to this user, who may own it
	case err != nil || fi.Mode()&fs.ModeSocket == 0:
		return false
	}
	return writableByCaller(c) || ownedByCaller(fi)
}

// beside lists the other sockets in dir that the command could reach,
// once per directory.
func (r *socketResolver) beside(dir string) []string {
	if r.listed[dir] {
		return nil
	}
	r.listed[dir] = true
	entries, err := inputs.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			out = append(out, r.judge(filepath.Join(dir, e.Name()))...)
		}
	}
	return out
}

// busiestDir is the directory that holds most of socks.
func busiestDir(socks []string) string {
	count := map[string]int{}
	best := ""
	for _, s := range socks {
		d := filepath.Dir(s)
		if count[d]++; count[d] > count[best] {
			best = d
		}
	}
	return best
}

// allowedSocket reports whether the policy lets the command connect to
// the socket at p.
func allowedSocket(p string, rules []policy.Rule) bool {
	return slices.ContainsFunc(rules, func(r policy.Rule) bool {
		ok, _ := doublestar.Match(r.Pattern, p)
		return ok || r.Pattern == p || under(p, r.Pattern)
	})
}
