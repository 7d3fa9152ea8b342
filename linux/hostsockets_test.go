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
