package darwin

import (
	"path"
	"slices"
	"strings"
)

// Unix sockets below a writable path can be bound and reached, so that
// tmux, ssh's ControlMaster or a build daemon work there. The host keeps
// sockets of its own in such places too, and those stay closed unless
// network.allowUnixSockets lists them (see socketscan.go): each socket
// found at start; the ssh agent's ($SSH_AUTH_SOCK as fence was started
// with, and launchd's per-session directories below /private/tmp where
// macOS puts it); the names servers use in /tmp (tmux's directory,
// PostgreSQL's and MySQL's sockets), for a server started after fence;
// and the container engines' and gpg-agent's directories in the home. A
// listed socket inside such a place stays reachable: the place's deny
// leaves it out (require-not), and no other socket of the place opens
// with it.

// hostSocketDirs are below the home: Docker Desktop, Colima, OrbStack,
// Lima, Rancher Desktop, gpg-agent.
var hostSocketDirs = []string{".docker", "Library/Containers/com.docker.docker", ".colima", ".orbstack", ".lima", ".rd", ".gnupg"}

// launchdSockets is launchd's per-session socket directories.
const launchdSockets = `^/private/tmp/com\.apple\.launchd\.[^/]+(/.*)?$`

// tmpServerSockets are where servers put their sockets in /tmp: tmux's
// per-user directory, PostgreSQL's and MySQL's sockets.
var tmpServerSockets = []string{`^/private/tmp/tmux-[0-9]+(/.*)?$`, `^/private/tmp/\.s\.PGSQL\.[0-9]+$`, `^/private/tmp/mysqlx?\.sock$`}

// hostSocketPlace is a place the host keeps its sockets: a path (and
// what is below it) or an anchored regex below /private/tmp. socket marks
// a socket found at start, whose file and directories are protected too;
// cut marks a tree fence could not list, closed but for exceptions.
type hostSocketPlace struct {
	path, regex string
	socket, cut bool
}

// filter matches the place whatever the case of its letters, as the
// deny rules do (macOS's file systems mostly ignore case).
func (h hostSocketPlace) filter() string {
	if h.regex != "" {
		return "(regex " + sbplRegex(foldRegex(h.regex)) + ")"
	}
	return "(regex " + sbplRegex(literalRegex(h.path, foldEqual, true)) + ")"
}

// tree is the place's directory, for a regex its literal start.
func (h hostSocketPlace) tree() string {
	if h.regex != "" {
		return "/private/tmp"
	}
	return h.path
}

// hostSocketPlaces are the places below a writable path that no listed
// rule covers whole.
func (w *writer) hostSocketPlaces(in Input) []hostSocketPlace {
	if in.AllUnixSockets {
		return nil
	}
	var places []hostSocketPlace
	for _, s := range []string{in.SSHAuthSock, in.SSHAuthSockResolved} {
		if s != "" {
			places = append(places, hostSocketPlace{path: darwinPath(s), socket: true})
		}
	}
	for _, s := range in.HostSockets {
		places = append(places, hostSocketPlace{path: darwinPath(s), socket: true})
	}
	places = append(places, hostSocketPlace{regex: launchdSockets})
	for _, re := range tmpServerSockets {
		places = append(places, hostSocketPlace{regex: re})
	}
	for _, home := range []string{in.Home, in.HomeResolved} {
		if home != "" {
			for _, d := range hostSocketDirs {
				places = append(places, hostSocketPlace{path: darwinPath(path.Join(home, d))})
			}
		}
	}
	for _, t := range in.SocketScanCut {
		places = append(places, hostSocketPlace{path: darwinPath(t), cut: true})
	}
	places = slices.DeleteFunc(places, func(h hostSocketPlace) bool {
		reached := slices.ContainsFunc(w.writeTrees, func(t string) bool { return under(h.tree(), t) || under(t, h.tree()) })
		covered := slices.ContainsFunc(in.UnixSockets, func(r PathRule) bool {
			return !r.Glob && slices.ContainsFunc(r.spellings(), func(t string) bool { return under(h.tree(), t) })
		})
		own := h.socket && in.TmpDir != "" && under(h.path, darwinPath(in.TmpDir))
		dns := h.socket && in.HostNetwork && under(h.path, dnsSocket)
		return !reached || covered || own || dns || h.socket && listedSocket(h.path, in.UnixSockets)
	})
	slices.SortStableFunc(places, func(a, b hostSocketPlace) int { return strings.Compare(a.path+a.regex, b.path+b.regex) })
	return slices.CompactFunc(places, func(a, b hostSocketPlace) bool { return a == b })
}

// except are the filters a place's deny leaves out: the listed sockets
// that may lie in it, and for a tree fence could not list, the private
// TMPDIR, where the command's own sockets are, and with the host's
// network mDNSResponder's socket.
func (w *writer) except(h hostSocketPlace, in Input) []string {
	var out []string
	if h.cut && in.TmpDir != "" {
		out = append(out, "(subpath "+sbplString(darwinPath(in.TmpDir))+")")
	}
	if h.cut && in.HostNetwork && (under(dnsSocket, h.tree()) || under(h.tree(), dnsSocket)) {
		out = append(out, "(subpath "+sbplString(dnsSocket)+")") // name resolution, which the host's network opens
	}
	for _, r := range in.UnixSockets {
		if slices.ContainsFunc(r.trees(), func(t string) bool { return under(t, h.tree()) || under(h.tree(), t) }) {
			out = appendNew(out, w.filters(r, false)...)
		}
	}
	return out
}

// hostSocketDenies closes the host's sockets below writable paths: no
// connect to one, no bind there (which would put a server of the
// command's where the host's clients look), no write in a place (unlink
// or rename of a socket there, or over it) and no rename of a directory
// above one (either would move a socket out of its deny). A tree fence
// could not list is closed to connect and bind only: its files stay
// writable, so a socket of the host's there can be renamed out of it
// (Seatbelt's vnode-type filter could single out sockets, but no profile
// known to work names a socket type, so fence does not).
func (w *writer) hostSocketDenies(in Input) {
	places := w.hostSocketPlaces(in)
	msg := "(with message " + sbplString(w.tag+":network.allowUnixSockets (a host unix socket, not listed)") + ")"
	cutMsg := "(with message " + sbplString(w.tag+":network.allowUnixSockets (below a tree fence could not list the host's unix sockets in)") + ")"
	var files, ancestors []string
	seen := map[string]bool{}
	for _, h := range places {
		connect := "(remote unix-socket " + h.filter() + ")"
		if ex := w.except(h, in); len(ex) > 0 {
			connect = "(require-all " + connect + " " + strings.Join(mapList(ex, func(f string) string { return "(require-not (remote unix-socket " + f + "))" }), " ") + ")"
		}
		if h.cut {
			// A server of the command's there could not be reached from
			// inside either: binding is closed too (but in the private
			// TMPDIR), so that none takes the place of a host socket
			// fence did not see.
			bind := "(local unix-socket " + h.filter() + ")"
			if in.TmpDir != "" && under(darwinPath(in.TmpDir), h.tree()) {
				bind = "(require-all " + bind + " (require-not (local unix-socket (subpath " + sbplString(darwinPath(in.TmpDir)) + "))))"
			}
			w.line("(deny network-outbound %s %s)", connect, cutMsg)
			w.line("(deny network-bind %s %s)", bind, cutMsg)
			continue
		}
		w.line("(deny network-outbound %s %s)", connect, msg)
		w.line("(deny network-bind (local unix-socket %s) %s)", h.filter(), msg)
		// A place denied by name keeps its sockets only while they stay
		// in it: renamed (a write of the place) to a writable path, one
		// would be reached there. So no write there (a socket's
		// unlink, rename or link; the place's own files with it), and no
		// rename of a directory above it.
		files = append(files, h.filter())
		start := h.tree()
		if h.regex == "" {
			start = parent(h.path)
		}
		for dir := start; dir != "/"; dir = parent(dir) {
			if !seen[dir] {
				seen[dir] = true
				ancestors = append(ancestors, "(regex "+sbplRegex(literalRegex(dir, foldEqual, false))+")")
			}
		}
	}
	if len(files) > 0 {
		w.line("(deny %s %s %s)", w.denyOps("file-write*"), joinFilters(files), msg)
	}
	if len(ancestors) > 0 {
		w.line("(deny file-write-unlink %s %s)", joinFilters(ancestors), msg)
	}
}
