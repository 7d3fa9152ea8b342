//go:build linux

package linux_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// TestHostSocketsAnywhere binds host sockets outside /run, where a tmux
// server, an editor or a database puts theirs (a directory the policy
// only reads, the workspace the command writes, the home), and checks
// that the sandbox reaches none of them, by its own path or through a
// link it plants, unless network.allowUnixSockets lists it.
func TestHostSocketsAnywhere(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			probe := newWorld(t, u.uid, `{}`)
			socks := map[string]string{
				"outside": probe.outside + "/tmux-default",
				"ws":      probe.ws + "/dev-server.sock",
				"home":    probe.home + "/.docker-desktop.sock",
			}
			for _, p := range socks {
				serve(t, "unix", p, nil)
				must(t, os.Chmod(p, 0o777))
			}
			for policy, want := range map[string]map[string]string{
				`{}`: {"outside": "permission denied", "ws": "permission denied", "home": "permission denied", "link": "permission denied"},
				fmt.Sprintf(`{"network": {"allowUnixSockets": [%q]}}`, socks["outside"]): {"outside": "connected", "ws": "permission denied", "home": "permission denied", "link": "connected"},
				`{"network": {"allowAllUnixSockets": true}}`:                             {"outside": "connected", "ws": "connected", "home": "connected", "link": "connected"},
			} {
				t.Run(policy, func(t *testing.T) {
					must(t, os.WriteFile(probe.settings, []byte(policy), 0o644))
					script := fmt.Sprintf("for s in %s %s %s; do ./netprobe unix $s; done; ln -s %s /tmp/planted && ./netprobe unix /tmp/planted",
						socks["outside"], socks["ws"], socks["home"], socks["outside"])
					r := probe.fence(t, "", nil, "-c", script)
					lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
					if len(lines) != 4 {
						t.Fatalf("want four answers, got %q\n%s", r.stdout, r.stderr)
					}
					for i, name := range []string{"outside", "ws", "home", "link"} {
						if !strings.Contains(lines[i], want[name]) {
							t.Errorf("connect to the %s socket: %q, want %q", name, lines[i], want[name])
						}
					}
				})
			}
		})
	}
}

// TestHostSocketOfAnotherUser binds a socket in another user's private
// directory (a tmux server of uid 65534): fence as root sees it, but
// the sandbox's root, whose namespace does not map that user, cannot
// search the directory, so fence must neither fail to start nor let the
// command reach it.
func TestHostSocketOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make another user's directory")
	}
	w := newWorld(t, 0, `{}`)
	dir := w.outside + "/tmux-65534"
	must(t, os.Mkdir(dir, 0o700))
	serve(t, "unix", dir+"/default", nil)
	must(t, os.Chown(dir, 65534, 65534))
	r := w.fence(t, "", nil, "--", "./netprobe", "unix", dir+"/default")
	check(t, r, 0, `connect: permission denied`, "")
}

// TestLandlockOnlyLocalPorts runs the engine without user namespaces with
// allowLocalOutboundPorts: the port is reached on the host's loopback
// directly (there is no namespace to relay it into), the proxies still
// serve, and a port the policy does not list stays closed.
func TestLandlockOnlyLocalPorts(t *testing.T) {
	open := serve(t, "tcp", "127.0.0.1:0", nil)
	closed := serve(t, "tcp", "127.0.0.1:0", nil)
	port := open.Addr().(*net.TCPAddr).Port
	w := newWorld(t, os.Getuid(), fmt.Sprintf(`{"network": {"allowLocalOutbound": true, "allowLocalOutboundPorts": [%d]}}`, port))
	r := w.withoutUserNS(t, "-c", "./netprobe direct "+open.Addr().String()+"; ./netprobe direct "+closed.Addr().String())
	check(t, r, 0, `^connected\nerror: dial tcp `+closed.Addr().String()+`: connect: permission denied\n$`, `enforcing the policy with Landlock alone`)
}

// TestHostSocketsOffTheTable hides host sockets whose names in the
// kernel's table no longer lead to them: one bound under a temporary
// name and linked into place (ssh's ControlMaster), one whose directory
// in the workspace was renamed after the bind; and one the user owns
// without the write bit, which the command could chmod in its workspace.
func TestHostSocketsOffTheTable(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			must(t, os.MkdirAll(w.home+"/.ssh/cm", 0o755))
			tmpName, master := w.home+"/.ssh/cm/ctl.tmp1234", w.home+"/.ssh/cm/ctl"
			serve(t, "unix", tmpName, nil)
			must(t, os.Link(tmpName, master))
			must(t, os.Remove(tmpName))
			must(t, os.Mkdir(w.ws+"/run", 0o755))
			serve(t, "unix", w.ws+"/run/server.sock", nil)
			must(t, os.Rename(w.ws+"/run", w.ws+"/moved"))
			serve(t, "unix", w.ws+"/closed.sock", nil)
			for _, p := range []string{master, w.ws + "/moved/server.sock", w.ws + "/closed.sock"} {
				must(t, os.Lchown(p, u.uid, u.uid))
				must(t, os.Chmod(p, 0o777))
			}
			must(t, os.Chmod(w.ws+"/closed.sock", 0o500))
			r := w.fence(t, "", nil, "-c", fmt.Sprintf("./netprobe unix %s; ./netprobe unix moved/server.sock; chmod 700 closed.sock; ./netprobe unix closed.sock", master))
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != 3 {
				t.Fatalf("want three answers, got %q\n%s", r.stdout, r.stderr)
			}
			for i, name := range []string{"linked into place", "in a renamed directory", "chmod-ed"} {
				if !strings.Contains(lines[i], "permission denied") && !strings.Contains(lines[i], "connection refused") {
					t.Errorf("connect to the socket %s: %q, want it hidden", name, lines[i])
				}
			}
		})
	}
}
