//go:build linux

package linux_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// serve listens on network/addr on the host and handles each connection
// with handle (closing it when nil), until the test ends.
func serve(t *testing.T, network, addr string, handle func(net.Conn)) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if handle == nil {
				c.Close()
				continue
			}
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return l
}

// TestProxies runs clients inside the sandbox against a server on the
// host's loopback: the proxies are the only way out, and they follow the
// domain rules. No traffic goes anywhere but loopback.
func TestProxies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ip := "127.0.0.1:" + port
	tests := []struct {
		name, allowed, mode, target, want string
	}{
		{"http allowed by IP literal", `["127.0.0.1"]`, "http", "http://" + ip + "/", "200  | hello"},
		{"http refused with the reason", `["example.com"]`, "http", "http://" + ip + "/", "403 not in network.allowedDomains | fence: blocked HTTP " + ip},
		{"http refused by deniedDomains", `["127.0.0.1"], "deniedDomains": ["127.0.0.1"]`, "http", "http://" + ip + "/", `403 denied by network.deniedDomains (network.deniedDomains "127.0.0.1")`},
		{"host network: proxies still offered", `["*"]`, "http", "http://" + ip + "/", "200  | hello"},
		{"host network: deniedDomains binds proxy clients", `["*"], "deniedDomains": ["127.0.0.1"]`, "http", "http://" + ip + "/", "403 denied by network.deniedDomains"},
		{"CONNECT allowed", `["127.0.0.1"]`, "connect", ip, "HTTP/1.1 200 Connection established"},
		{"CONNECT refused", `[]`, "connect", ip, "HTTP/1.1 403 Forbidden"},
		{"SOCKS5 allowed", `["127.0.0.1"]`, "socks", ip, "connected"},
		{"SOCKS5 name resolved by the proxy", `["localhost", "127.0.0.1"]`, "socks", "localhost:" + port, "connected"},
		{"SOCKS5 refused", `["example.com"]`, "socks", ip, "error: socks connect tcp"},
		{"no direct route to the host", `["127.0.0.1"]`, "direct", ip, "error: dial tcp " + ip + ": connect: connection refused"},
		{"no direct route, even with local binding", `["127.0.0.1"], "allowLocalBinding": true`, "direct", ip, "error: dial tcp " + ip + ": connect: connection refused"},
		{"Landlock's TCP rules when local binding is off", `["127.0.0.1"], "allowLocalBinding": false`, "direct", ip, "error: dial tcp " + ip + ": connect: permission denied"},
		{"no listening with allowLocalBinding false", `[], "allowLocalBinding": false`, "serve", "8080", "error: listen tcp 127.0.0.1:8080: bind: permission denied"},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, fmt.Sprintf(`{"network": {"allowedDomains": %s}}`, tt.allowed))
				r := w.fence(t, "", nil, "--", "./netprobe", tt.mode, tt.target)
				if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), tt.want) {
					t.Errorf("netprobe %s %s: exit %d, got %q, want %q\nstderr:\n%s", tt.mode, tt.target, r.code, r.stdout, tt.want, r.stderr)
				}
				if tt.mode == "socks" && strings.HasPrefix(tt.want, "error") && !strings.Contains(r.stdout, "connection not allowed by ruleset") {
					t.Errorf("SOCKS refusal does not say why: %q", r.stdout)
				}
			})
		}
	}
}

// TestMonitor checks that -m names each refused connection and counts them.
func TestMonitor(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["example.com"]}}`)
			r := w.fence(t, "", nil, "-m", "--", "./netprobe", "connect", "127.0.0.1:9")
			check(t, r, 0, `^HTTP/1.1 403 Forbidden\n$`, `(?m)^fence: blocked CONNECT 127.0.0.1:9 — not in network.allowedDomains\nfence: monitor: 1 connections blocked\n`)
		})
	}
}

// TestResolvedToHost: an allowed name that resolves to the host's
// loopback (localhost from the hosts file, or any name a hosts file maps
// there) is refused by both proxies, with the reason naming the rule and
// the key to set, unless allowLocalOutboundPorts lists the port. Only the
// host's loopback is ever dialled.
func TestResolvedToHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	refused := `^403 resolves to (127\.0\.0\.1|::1), the host's loopback \((127\.0\.0\.0/8|::1/128)\), which the proxies reach only at a port network\.allowLocalOutboundPorts lists: set network\.allowLocalOutboundPorts: \[` + port + `\] and network\.allowLocalOutbound: true \(sandbox\.loopbackAddress\) \| fence: blocked HTTP localhost:` + port
	tests := []struct {
		name, network, mode, target, want string
	}{
		{"http to localhost refused", `{"allowedDomains": ["localhost"]}`, "http", "http://localhost:" + port + "/", refused},
		{"CONNECT to localhost refused", `{"allowedDomains": ["localhost"]}`, "connect", "localhost:" + port, `^HTTP/1\.1 403 Forbidden\n$`},
		{"SOCKS5 to localhost refused", `{"allowedDomains": ["localhost"]}`, "socks", "localhost:" + port, `connection not allowed by ruleset`},
		{"http to localhost at an allowed local port", `{"allowedDomains": ["localhost"], "allowLocalOutbound": true, "allowLocalOutboundPorts": [` + port + `]}`, "http", "http://localhost:" + port + "/", `^200  \| hello\n$`},
		{"SOCKS5 to localhost at an allowed local port", `{"allowedDomains": ["localhost"], "allowLocalOutbound": true, "allowLocalOutboundPorts": [` + port + `]}`, "socks", "localhost:" + port, `^connected\n$`},
		{"the port alone is not enough", `{"allowedDomains": ["localhost"], "allowLocalOutboundPorts": [` + port + `]}`, "http", "http://localhost:" + port + "/", `^403 resolves to`},
		{"a decimal spelling of 127.0.0.1 is that address", `{"allowedDomains": ["*.example.com"]}`, "http", "http://2130706433:" + port + "/", `^403 not in network\.allowedDomains \| fence: blocked HTTP 2130706433:` + port},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"network": `+tt.network+`}`)
				r := w.fence(t, "", nil, "-m", "--", "./netprobe", tt.mode, tt.target)
				check(t, r, 0, tt.want, "")
				if strings.HasPrefix(tt.want, "^200") || strings.HasPrefix(tt.want, "^connected") {
					return
				}
				if !strings.Contains(r.stderr, "fence: blocked ") || strings.Contains(tt.want, "resolves") && !strings.Contains(r.stderr, "(sandbox.loopbackAddress)") {
					t.Errorf("-m does not name the refusal and its rule:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestResolvedToHostLandlockOnly is TestResolvedToHost in the engine
// without user namespaces, where the proxies listen on the host's
// loopback: an allowed name resolving there is refused all the same.
func TestResolvedToHostLandlockOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	w := newWorld(t, os.Getuid(), `{"network": {"allowedDomains": ["localhost"]}}`)
	r := w.withoutUserNS(t, "--", "./netprobe", "http", "http://localhost:"+port+"/")
	check(t, r, 0, `^403 resolves to (127\.0\.0\.1|::1), the host's loopback .*set network\.allowLocalOutboundPorts: \[`+port+`\].*\(sandbox\.loopbackAddress\)`, `enforcing the policy with Landlock alone`)
}

// TestResolvedToHostByHostsFile maps a made-up allowed name to 127.0.0.1
// in a hosts file that only fence's mount namespace sees (made by the
// test), as a hosts entry or DNS rebinding would: the proxies refuse it,
// and reach it at an allowLocalOutboundPorts port. Root only, for the
// mount namespace.
func TestResolvedToHostByHostsFile(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give fence its own /etc/hosts in a mount namespace")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	hosts := filepath.Join(t.TempDir(), "hosts")
	must(t, os.WriteFile(hosts, []byte("127.0.0.1 registry.corp.test\n"), 0o644))
	target := "http://registry.corp.test:" + port + "/"
	for _, u := range users(t) {
		for network, want := range map[string]string{
			`{"allowedDomains": ["*.corp.test"]}`: `^403 resolves to 127\.0\.0\.1, the host's loopback .*set network\.allowLocalOutboundPorts: \[` + port + `\].*\(sandbox\.loopbackAddress\)`,
			`{"allowedDomains": ["*.corp.test"], "allowLocalOutbound": true, "allowLocalOutboundPorts": [` + port + `]}`: `^200  \| hello\n$`,
			`{"allowedDomains": ["*.corp.test", "127.0.0.1"]}`:                                                           `^200  \| hello\n$`,
		} {
			t.Run(u.name+"/"+network, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"network": `+network+`}`)
				argv := append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hosts},
					w.asUser(filepath.Join(bin, "fence"), "-s", w.settings, "--", "./netprobe", "http", target)...)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
				check(t, runResult(t, cmd), 0, want, "")
			})
		}
	}
}

// TestLocalOutboundPorts relays the host loopback ports the policy names
// into the sandbox, on 127.0.0.1 and ::1, and no others.
func TestLocalOutboundPorts(t *testing.T) {
	v4 := serve(t, "tcp", "127.0.0.1:0", nil)
	port := v4.Addr().(*net.TCPAddr).Port
	serve(t, "tcp", fmt.Sprintf("[::1]:%d", port), nil)
	other := serve(t, "tcp", "127.0.0.1:0", nil).Addr().(*net.TCPAddr).Port
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, fmt.Sprintf(`{"network": {"allowLocalOutbound": true, "allowLocalOutboundPorts": [%d]}}`, port))
			for target, want := range map[string]string{
				fmt.Sprintf("127.0.0.1:%d", port):  "connected",
				fmt.Sprintf("[::1]:%d", port):      "connected",
				fmt.Sprintf("127.0.0.1:%d", other): "connection refused", // the sandbox's own loopback
			} {
				r := w.fence(t, "", nil, "--", "./netprobe", "direct", target)
				if !strings.Contains(r.stdout, want) {
					t.Errorf("direct %s: %q, want %q\n%s", target, r.stdout, want, r.stderr)
				}
			}
			// Without local binding, Landlock's TCP rules allow only the
			// relayed ports and the proxies'.
			w = newWorld(t, u.uid, fmt.Sprintf(`{"network": {"allowLocalBinding": false, "allowLocalOutbound": true, "allowLocalOutboundPorts": [%d]}}`, port))
			r := w.fence(t, "", nil, "-c", fmt.Sprintf("./netprobe direct 127.0.0.1:%d; ./netprobe direct 127.0.0.1:%d", port, other))
			check(t, r, 0, fmt.Sprintf("^connected\nerror: dial tcp 127.0.0.1:%d: connect: permission denied\n$", other), "")
		})
	}
}

// TestPortForward exposes a server inside the sandbox on the host's
// loopback with -p, and reaches it from the host. -p lets the server
// listen on its port even without allowLocalBinding.
func TestPortForward(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // find a free port
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			cmd := w.command(context.Background(), nil, "-p", fmt.Sprint(port), "-c", fmt.Sprintf("ls /proc/self/fd | tr '\\n' ' ' >&2; ./netprobe serve %d", port))
			out, err := cmd.StdoutPipe()
			must(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			must(t, cmd.Start())
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line != "listening\n" {
				cmd.Process.Kill()
				t.Fatalf("server inside: %q", line)
			}
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			must(t, err)
			got, _ := io.ReadAll(c)
			c.Close()
			if string(got) != "from-sandbox\n" {
				t.Errorf("read %q through -p, want from-sandbox", got)
			}
			cmd.Wait()
			if fds := strings.Fields(stderr.String()); !slices.Equal(fds, []string{"0", "1", "2", "3"}) { // 3: ls's own
				t.Errorf("the command holds descriptors it should not: %v", fds)
			}
		})
	}
}

// TestHostUnixSockets puts a docker-like socket under /run and checks
// that the sandbox cannot connect to it unless allowUnixSockets lists it.
func TestHostUnixSockets(t *testing.T) {
	dir, err := os.MkdirTemp("/run", "fence-test-")
	if err != nil {
		t.Skipf("cannot create a socket under /run: %v", err)
	}
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o755))
	sock := dir + "/docker.sock"
	serve(t, "unix", sock, nil)
	must(t, os.Chmod(sock, 0o777))
	for _, u := range users(t) {
		for policy, want := range map[string]string{
			`{}`: "connect: permission denied", // masked
			fmt.Sprintf(`{"network": {"allowUnixSockets": [%q]}}`, sock): "connected",
			`{"network": {"allowAllUnixSockets": true}}`:                 "connected",
		} {
			t.Run(u.name+"/"+policy, func(t *testing.T) {
				w := newWorld(t, u.uid, policy)
				r := w.fence(t, "", nil, "--", "./netprobe", "unix", sock)
				if !strings.Contains(r.stdout, want) {
					t.Errorf("connect to %s: %q, want %q\n%s", sock, r.stdout, want, r.stderr)
				}
			})
		}
	}
}

// TestNoUDP sends a datagram from the sandbox to a UDP socket on the
// host's loopback: it must not arrive, since the sandbox's loopback is
// its own.
func TestNoUDP(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			must(t, err)
			defer pc.Close()
			port := pc.LocalAddr().(*net.UDPAddr).Port
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["127.0.0.1"]}}`)
			r := w.fence(t, "", nil, "-c", fmt.Sprintf("echo sandbox > /dev/udp/127.0.0.1/%d; getent hosts example.com || echo no-dns; ./netprobe raw 127.0.0.1", port))
			check(t, r, 0, `no-dns\nerror: listen ip4:icmp 0.0.0.0: socket: operation not permitted\n$`, "")
			pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond)) // the datagram was sent before fence exited
			if n, _, err := pc.ReadFrom(make([]byte, 64)); err == nil {
				t.Errorf("a datagram from the sandbox reached the host (%d bytes)", n)
			}
		})
	}
}

// TestFallbackProxies checks the network of the Landlock-only fallback:
// the proxies on the host's loopback are the only TCP destinations.
func TestFallbackProxies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	ip := srv.Listener.Addr().String()
	w := newWorld(t, os.Getuid(), `{"network": {"allowedDomains": ["127.0.0.1"]}}`)
	r := w.withoutUserNS(t, "-c", "./netprobe http http://"+ip+"/; ./netprobe direct "+ip)
	check(t, r, 0, `^200  \| hello\nerror: dial tcp `+ip+`: connect: permission denied\n$`, `enforcing the policy with Landlock alone`)
}

// TestSSHProxy runs fence's ssh ProxyCommand inside the sandbox against
// an echo server on the host's loopback, allowed and refused.
func TestSSHProxy(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) { testSSHProxy(t, u) })
	}
}

func testSSHProxy(t *testing.T, u user) {
	l := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) { io.Copy(c, c) })
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["127.0.0.1"]}}`)
	self, err := os.ReadFile(filepath.Join(bin, "fence"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(w.ws, "fence"), self, 0o755))
	r := w.fence(t, "", nil, "-c", "printf ping | ./fence ssh-proxy 127.0.0.1 "+port+"; echo; ./fence ssh-proxy example.com 22 </dev/null; echo $GIT_SSH_COMMAND")
	check(t, r, 0, `^ping\n.*ProxyCommand='.*fence ssh-proxy %h %p'\n$`, `connect to example.com:22 through fence's proxy: .*connection not allowed by ruleset`)
}

// TestAbstractSockets listens on an abstract unix socket on the host:
// a private network namespace has its own abstract namespace, and with
// the host's network Landlock's scoping keeps the sandbox out.
func TestAbstractSockets(t *testing.T) {
	name := fmt.Sprintf("@fence-test-%d", os.Getpid())
	serve(t, "unix", name, nil)
	for _, u := range users(t) {
		for policy, want := range map[string]string{
			`{}`:                                     "connect: connection refused",      // another network namespace: no such socket
			`{"network": {"allowedDomains": ["*"]}}`: "connect: operation not permitted", // Landlock scope
		} {
			t.Run(u.name+"/"+policy, func(t *testing.T) {
				w := newWorld(t, u.uid, policy)
				r := w.fence(t, "", nil, "--", "./netprobe", "unix", name)
				if !strings.Contains(r.stdout, want) {
					t.Errorf("connect to %s: %q, want %q\n%s", name, r.stdout, want, r.stderr)
				}
			})
		}
	}
}
