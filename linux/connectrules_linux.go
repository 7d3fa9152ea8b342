package linux

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// What the Landlock-only engine's supervisor lets the sandbox connect
// to, decided on fence's own copy of each connect() address (see
// connectnotify_linux.go for how it gets one).

// connectRules is what the supervisor lets the sandbox connect to.
type connectRules struct {
	// Filtered is a network of proxies: inet only to ProxyPorts on
	// 127.0.0.1 and LocalPorts on 127.0.0.1 and ::1.
	Filtered               bool
	ProxyPorts, LocalPorts []int
	// HostSockets are the host's sockets bound at start that the policy
	// does not list, by file identity.
	HostSockets map[fileKey]string
	// Listed are the paths below which the policy lets the command
	// connect to any unix socket (its "unix" Landlock rules).
	Listed []string
}

// unixRules are the paths of plan's "unix" Landlock rules, each also by
// its canonical path.
func unixRules(plan *sandbox.Plan) []string {
	var out []string
	for _, r := range plan.Landlock.Rules {
		if r.Access == "unix" {
			out = append(out, r.Path)
			if real, err := filepath.EvalSymlinks(r.Path); err == nil && real != r.Path {
				out = append(out, real)
			}
		}
	}
	return out
}

// listed reports whether the policy lets the command connect to the
// socket at p, a canonical path.
func (r *connectRules) listed(p string) bool {
	return slices.ContainsFunc(r.Listed, func(l string) bool {
		return p == l || l == "/" || strings.HasPrefix(p, l+"/")
	})
}

// fileKey identifies a file whatever the path to it.
type fileKey struct{ Dev, Ino uint64 }

func keyOf(st *unix.Stat_t) fileKey { return fileKey{uint64(st.Dev), st.Ino} }

// hostSocketKeys stats the sockets among paths (the plan's masks).
func hostSocketKeys(paths []string) map[fileKey]string {
	keys := map[fileKey]string{}
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			keys[keyOf(&st)] = p
		}
	}
	return keys
}

// dest is a connect() address as the kernel will read it.
type dest struct {
	Family uint16
	Addr   netip.AddrPort // AF_INET, AF_INET6
	Path   string         // AF_UNIX pathname
	// Abstract is an AF_UNIX name in the abstract namespace.
	Abstract bool
}

func (d dest) String() string {
	switch {
	case d.Family == unix.AF_INET || d.Family == unix.AF_INET6:
		return d.Addr.String()
	case d.Abstract:
		return "@" + d.Path
	case d.Family == unix.AF_UNIX:
		return strconv.Quote(d.Path)
	}
	return fmt.Sprintf("address family %d", d.Family)
}

// parseSockaddr reads a struct sockaddr of len(b) bytes the way the
// kernel does. An address too short for its family is an error (the
// kernel's EINVAL).
func parseSockaddr(b []byte) (dest, error) {
	if len(b) < 2 {
		return dest{}, unix.EINVAL
	}
	d := dest{Family: binary.NativeEndian.Uint16(b)}
	switch d.Family {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4 {
			return d, unix.EINVAL
		}
		d.Addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:]))
	case unix.AF_INET6:
		if len(b) < 24 { // SIN6_LEN_RFC2133: no scope id
			return d, unix.EINVAL
		}
		d.Addr = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:]))
	case unix.AF_UNIX:
		p := b[2:]
		if len(p) == 0 {
			return d, unix.EINVAL // unnamed: nothing to connect to
		}
		if p[0] == 0 {
			d.Abstract, p = true, p[1:]
		} else if i := slices.Index(p, 0); i >= 0 {
			p = p[:i]
		}
		d.Path = string(p)
	}
	return d, nil
}

// verdict is a judgement: Errno 0 lets the connection be made.
type verdict struct {
	Errno unix.Errno
	Rule  string // the key of the policy that decides
	Why   string
}

// judge decides d by address; a unix pathname is judged again by the
// file it names (judgeSocket).
func (r *connectRules) judge(d dest) verdict {
	switch d.Family {
	case unix.AF_UNSPEC, unix.AF_NETLINK:
		return verdict{} // a disconnect; the kernel's own sockets
	case unix.AF_INET, unix.AF_INET6:
		if !r.Filtered {
			return verdict{}
		}
		a, port := d.Addr.Addr().Unmap(), int(d.Addr.Port())
		v4 := a == netip.AddrFrom4([4]byte{127, 0, 0, 1})
		if v4 && slices.Contains(r.ProxyPorts, port) || (v4 || a == netip.IPv6Loopback()) && slices.Contains(r.LocalPorts, port) {
			return verdict{}
		}
		return verdict{unix.EACCES, "network.allowedDomains", "only fence's proxies on 127.0.0.1, and the ports of network.allowLocalOutboundPorts on 127.0.0.1 and ::1, are reachable (network.allowedDomains decides names)"}
	case unix.AF_UNIX:
		return verdict{} // judged by the socket (judgeSocket, unlisted)
	}
	return verdict{unix.EACCES, "network", "the sandbox may connect only to inet and unix addresses"}
}

// judgeSocket decides a unix path by the file it opened.
func (r *connectRules) judgeSocket(k fileKey) verdict {
	if p, ok := r.HostSockets[k]; ok {
		return verdict{unix.EACCES, "network.allowUnixSockets", fmt.Sprintf("the host's unix socket %q, which network.allowUnixSockets does not list", p)}
	}
	return verdict{}
}
