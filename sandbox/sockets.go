package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fence-sandbox/fence/policy"
)

// SocketRoots are where fence looks for the host's unix sockets at start
// (docker, containerd, podman, the session and system buses, systemd, a
// user's runtime directory), besides $SSH_AUTH_SOCK.
var SocketRoots = []string{"/run", "/var/run"}

// socketDepth bounds the walk below each root.
const socketDepth = 4

// hostSockets lists the unix sockets under SocketRoots and the one
// $SSH_AUTH_SOCK names.
func hostSockets(environ []string) []string {
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
	for _, kv := range environ {
		if p, ok := strings.CutPrefix(kv, "SSH_AUTH_SOCK="); ok && filepath.IsAbs(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 {
				found = append(found, p)
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// allowedSocket reports whether the policy lets the command connect to
// the socket at p.
func allowedSocket(p string, rules []policy.Rule) bool {
	return slices.ContainsFunc(rules, func(r policy.Rule) bool {
		ok, _ := doublestar.Match(r.Pattern, p)
		return ok || r.Pattern == p
	})
}
