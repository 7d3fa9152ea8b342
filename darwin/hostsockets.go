package darwin

import (
	"path"
	"slices"
	"strings"
)

// Unix sockets below a writable path can be bound and reached, so that
// tmux, ssh's ControlMaster or a build daemon work there. The host keeps
// sockets of its own in such places too, and those stay closed unless
// network.allowUnixSockets lists them (a listed one is reached through
// its allow, which a deny here would undo, so a place holding a listed
// socket is left open): the ssh agent ($SSH_AUTH_SOCK, and launchd's
// per-session directories below /private/tmp where macOS puts it), and
// the container engines' and gpg-agent's sockets in the home.

// hostSocketDirs are below the home: Docker Desktop, Colima, OrbStack,
// Lima, Rancher Desktop, gpg-agent.
var hostSocketDirs = []string{".docker", "Library/Containers/com.docker.docker", ".colima", ".orbstack", ".lima", ".rd", ".gnupg"}

// launchdSockets is launchd's per-session socket directories.
const launchdSockets = `^/private/tmp/com\.apple\.launchd\.[^/]+(/.*)?$`

// hostSocketPlace is a place the host keeps its sockets: a path (and
// what is below it) or an anchored regex.
type hostSocketPlace struct {
	path, regex string
}

func (h hostSocketPlace) filter() string {
	if h.regex != "" {
		return "(regex " + sbplRegex(h.regex) + ")"
	}
	return "(subpath " + sbplString(h.path) + ")"
}

// tree is the place's directory, for the regex its literal start.
func (h hostSocketPlace) tree() string {
	if h.regex != "" {
		return "/private/tmp"
	}
	return h.path
}

// hostSocketPlaces are the places below a writable path that no listed
// socket lies in.
func (w *writer) hostSocketPlaces(in Input) []hostSocketPlace {
	if in.AllUnixSockets {
		return nil
	}
	var places []hostSocketPlace
	for _, s := range []string{in.SSHAuthSock, in.SSHAuthSockResolved} {
		if s != "" {
			places = append(places, hostSocketPlace{path: darwinPath(s)})
		}
	}
	places = append(places, hostSocketPlace{regex: launchdSockets})
	if in.Home != "" {
		for _, d := range hostSocketDirs {
			places = append(places, hostSocketPlace{path: path.Join(in.Home, d)})
		}
	}
	return slices.DeleteFunc(places, func(h hostSocketPlace) bool {
		reached := slices.ContainsFunc(w.writeTrees, func(t string) bool { return under(h.tree(), t) || under(t, h.tree()) })
		listed := slices.ContainsFunc(in.UnixSockets, func(r PathRule) bool {
			return slices.ContainsFunc(r.trees(), func(t string) bool { return under(t, h.tree()) || under(h.tree(), t) })
		})
		return !reached || listed
	})
}

// hostSocketDenies closes the host's sockets below writable paths.
func (w *writer) hostSocketDenies(in Input) {
	places := w.hostSocketPlaces(in)
	if len(places) == 0 {
		return
	}
	filters := make([]string, len(places))
	for i, h := range places {
		filters[i] = h.filter()
	}
	msg := sbplString(w.tag + ":network.allowUnixSockets (the host's own sockets, not listed)")
	w.line("(deny network-outbound (remote unix-socket %s) (with message %s))", strings.Join(filters, " "), msg)
}
