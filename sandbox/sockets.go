package sandbox

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
)

// A pathname unix socket is reachable through a read-only mount
// (connect is not a write to the file system), so the sandbox hides
// every socket of the host that network.allowUnixSockets does not list.
// fence finds them at start in three places:
//
//   - /proc/net/unix, every socket bound in fence's network namespace,
//     wherever it lies (a tmux server's in /tmp, an editor's in $HOME,
//     a database's under /var);
//   - SocketRoots, for sockets bound in another network namespace and
//     bind-mounted in (docker.sock in a CI container);
//   - $SSH_AUTH_SOCK.
//
// A socket bound after the start, or bound by a relative path, or
// reached through a hard link fence did not see, is not hidden: Landlock
// ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) refuses those where the kernel
// has it.

// SocketRoots are where fence also walks for the host's unix sockets.
var SocketRoots = []string{"/run", "/var/run"}

// ProcNetUnix is the kernel's table of unix sockets; a variable so that
// tests can give their own.
var ProcNetUnix = "/proc/net/unix"

// socketDepth bounds the walk below each of SocketRoots.
const socketDepth = 4

// HostSockets lists the pathname unix sockets of the host that this user
// could connect to, each by its canonical path, sorted.
func HostSockets(environ []string) []string {
	var found []string
	if f, err := os.Open(ProcNetUnix); err == nil {
		found = boundSockets(f)
		f.Close()
	}
	found = append(found, walkSockets()...)
	for _, kv := range environ {
		if p, ok := strings.CutPrefix(kv, "SSH_AUTH_SOCK="); ok && filepath.IsAbs(p) {
			found = append(found, p)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	var out []string
	dirs := map[string]string{}
	for _, p := range found {
		if c, ok := reachableSocket(p, dirs); ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// boundSockets reads the absolute paths of /proc/net/unix. A line is
// "Num: RefCount Protocol Flags Type St Inode Path"; abstract names
// start with "@" and relative ones cannot be found, so both are left
// out. A path with a newline in it breaks its line: what comes of it is
// checked to be a socket before it is used.
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
	return filepath.Clean(rest), true
}

// walkSockets lists the sockets below SocketRoots.
func walkSockets() []string {
	var found []string
	walked := map[string]bool{}
	for _, root := range SocketRoots {
		real, err := filepath.EvalSymlinks(root)
		if err != nil || walked[real] {
			continue // /var/run is usually /run
		}
		walked[real] = true
		filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
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

// reachableSocket returns the canonical path of the socket at p when it
// is one this user may connect to (connect needs write permission on
// the socket file and search permission on the way to it). dirs caches
// the canonical paths of directories ("" for one that cannot be
// resolved).
func reachableSocket(p string, dirs map[string]string) (string, bool) {
	parent := filepath.Dir(p)
	dir, seen := dirs[parent]
	if !seen {
		dir, _ = filepath.EvalSymlinks(parent)
		dirs[parent] = dir
	}
	if dir == "" {
		return "", false
	}
	c := filepath.Join(dir, filepath.Base(p))
	fi, err := os.Lstat(c)
	if err != nil || fi.Mode()&fs.ModeSocket == 0 || !writableByCaller(c) {
		return "", false
	}
	return c, true
}

// allowedSocket reports whether the policy lets the command connect to
// the socket at p.
func allowedSocket(p string, rules []policy.Rule) bool {
	return slices.ContainsFunc(rules, func(r policy.Rule) bool {
		ok, _ := doublestar.Match(r.Pattern, p)
		return ok || r.Pattern == p || under(p, r.Pattern)
	})
}
