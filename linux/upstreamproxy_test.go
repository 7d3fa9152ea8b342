//go:build linux

package linux_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testUpstream is the user's own proxy (as mitmproxy would be) on the
// host's loopback: it records what it is asked, answers absolute-URI
// requests itself and tunnels every CONNECT to dialTo, whatever the name.
type testUpstream struct {
	addr   string
	dialTo string
	mu     sync.Mutex
	seen   []string
}

func newTestUpstream(t *testing.T, dialTo string) *testUpstream {
	t.Helper()
	u := &testUpstream{dialTo: dialTo}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	u.addr = srv.Listener.Addr().String()
	return u
}

func (u *testUpstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.seen = append(u.seen, r.Method+" "+r.RequestURI+" "+r.Header.Get("Proxy-Authorization"))
	u.mu.Unlock()
	if r.Method != http.MethodConnect {
		fmt.Fprintf(w, "upstream saw %s", r.URL.Host)
		return
	}
	target, err := net.Dial("tcp", u.dialTo)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer target.Close()
	client, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer client.Close()
	io.WriteString(client, "HTTP/1.1 200 OK\r\n\r\n")
	go io.Copy(target, client)
	io.Copy(client, target)
}

func (u *testUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.seen
	u.seen = nil
	return s
}

var testUpstreamAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))

// TestUpstreamProxyByName runs netprobe inside the sandbox with
// network.defaultAction "proxy" and a hosts file (seen only in fence's
// own mount namespace, made by the test) that gives the names addresses:
// an allowed name goes direct, a name no rule names goes through the
// upstream as the address fence checked, with the credentials (HTTP,
// CONNECT and SOCKS5), and a
// denied name or one resolving to a private address never reaches the
// upstream. Nothing is dialled but the host's loopback: the public
// address of unknown.corp.test is only checked, never dialled. Root
// only, for the mount namespace.
func TestUpstreamProxyByName(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give fence its own /etc/hosts in a mount namespace")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	up := newTestUpstream(t, srv.Listener.Addr().String())
	hosts := filepath.Join(t.TempDir(), "hosts")
	must(t, os.WriteFile(hosts, []byte("127.0.0.1 allowed.corp.test\n8.8.8.8 unknown.corp.test denied.corp.test\n10.0.0.5 private.corp.test\n"), 0o644))
	policy := `{"network": {"allowedDomains": ["allowed.corp.test", "127.0.0.1"], "deniedDomains": ["denied.corp.test"], "defaultAction": "proxy", "upstreamProxy": "http://alice:s3cret@` + up.addr + `"}}`
	at := func(host string) string { return net.JoinHostPort(host, port) }
	tests := []struct {
		name, mode, target, want string
		seen                     []string
	}{
		{"allowed name goes direct", "http", "http://" + at("allowed.corp.test") + "/", `^200  \| hello\n$`, nil},
		{"unknown name via the upstream, HTTP", "http", "http://" + at("unknown.corp.test") + "/", `^200  \| upstream saw 8\.8\.8\.8:` + port + `\n$`,
			[]string{"GET http://" + at("8.8.8.8") + "/ " + testUpstreamAuth}},
		{"unknown name via the upstream, CONNECT", "connect", at("unknown.corp.test"), `^HTTP/1\.1 200 Connection established\n$`,
			[]string{"CONNECT " + at("8.8.8.8") + " " + testUpstreamAuth}},
		{"unknown name via the upstream, SOCKS5", "socks", at("unknown.corp.test"), `^connected\n$`,
			[]string{"CONNECT " + at("8.8.8.8") + " " + testUpstreamAuth}},
		{"denied name never forwarded", "http", "http://" + at("denied.corp.test") + "/", `^403 denied by network\.deniedDomains \(network\.deniedDomains "denied\.corp\.test"\)`, nil},
		{"private address refused before the upstream", "http", "http://" + at("private.corp.test") + "/", `^403 resolves to 10\.0\.0\.5, a private, .*; such a host is not forwarded to the upstream proxy either \(sandbox\.privateAddress\)`, nil},
		{"private address refused before the upstream, CONNECT", "connect", at("private.corp.test"), `^HTTP/1\.1 403 Forbidden\n$`, nil},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, policy)
				argv := append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hosts},
					w.asUser(filepath.Join(bin, "fence"), "-s", w.settings, "--", "./netprobe", tt.mode, tt.target)...)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
				r := runResult(t, cmd)
				check(t, r, 0, tt.want, "")
				if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint(tt.seen) {
					t.Errorf("the upstream saw %q, want %q", seen, tt.seen)
				}
				if strings.Contains(r.stdout+r.stderr, "s3cret") {
					t.Errorf("the run printed the upstream's password:\n%s\n%s", r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestUpstreamProxyFailsClosed: with address literals and localhost (no
// hosts file needed), a public address no rule names goes through the
// upstream, a denied one and a name resolving to the host's loopback do
// not; an upstream that is not there fails the connection with a 502,
// and the refusal summary names it; the Landlock-only engine forwards
// too. -d and config show name the upstream without its credentials.
func TestUpstreamProxyFailsClosed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	up := newTestUpstream(t, srv.Listener.Addr().String())
	dead := serve(t, "tcp", "127.0.0.1:0", nil)
	deadAddr := dead.Addr().String()
	dead.Close()
	network := func(upstream string) string {
		return `{"network": {"allowedDomains": ["allowed.test"], "deniedDomains": ["9.9.9.9"], "defaultAction": "proxy", "upstreamProxy": "http://alice:s3cret@` + upstream + `"}}`
	}
	tests := []struct {
		name, upstream, mode, target, stdout, stderr string
		seen                                         []string
	}{
		{"public address via the upstream", up.addr, "http", "http://8.8.8.8:" + port + "/", `^200  \| upstream saw 8\.8\.8\.8:` + port + `\n$`, "",
			[]string{"GET http://8.8.8.8:" + port + "/ " + testUpstreamAuth}},
		{"denied address never forwarded", up.addr, "connect", "9.9.9.9:" + port, `^HTTP/1\.1 403 Forbidden\n$`, `network\.deniedDomains "9\.9\.9\.9"`, nil},
		{"loopback name refused before the upstream", up.addr, "http", "http://localhost:" + port + "/", `^403 resolves to (127\.0\.0\.1|::1), the host's loopback`, "", nil},
		{"upstream unreachable, CONNECT", deadAddr, "connect", "8.8.8.8:" + port, `^HTTP/1\.1 502 Bad Gateway\n$`,
			`fence: the proxies refused 1 connection to 8\.8\.8\.8:` + port + ` \(network\.upstreamProxy "http://` + deadAddr + `"\): the upstream proxy http://` + deadAddr + ` could not be reached`, nil},
		{"upstream unreachable, HTTP", deadAddr, "http", "http://8.8.8.8:" + port + "/", `^502 the upstream proxy http://` + deadAddr + ` \(network\.upstreamProxy\) could not be reached`, "", nil},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, network(tt.upstream))
				r := w.fence(t, "", nil, "--", "./netprobe", tt.mode, tt.target)
				check(t, r, 0, tt.stdout, tt.stderr)
				if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint(tt.seen) {
					t.Errorf("the upstream saw %q, want %q", seen, tt.seen)
				}
				if strings.Contains(r.stdout+r.stderr, "s3cret") {
					t.Errorf("the run printed the upstream's password:\n%s\n%s", r.stdout, r.stderr)
				}
			})
		}
	}
	t.Run("Landlock-only engine", func(t *testing.T) {
		w := newWorld(t, os.Getuid(), network(up.addr))
		r := w.withoutUserNS(t, "--", "./netprobe", "http", "http://8.8.8.8:"+port+"/")
		check(t, r, 0, `^200  \| upstream saw 8\.8\.8\.8:`+port+`\n$`, "")
		if seen := up.take(); fmt.Sprint(seen) != fmt.Sprint([]string{"GET http://8.8.8.8:" + port + "/ " + testUpstreamAuth}) {
			t.Errorf("the upstream saw %q", seen)
		}
	})
	t.Run("debug", func(t *testing.T) {
		w := newWorld(t, os.Getuid(), network(up.addr))
		r := w.fence(t, "", nil, "-d", "--", "true")
		check(t, r, 0, "", `(?m)^fence: debug: network: hosts no domain rule names go to the upstream proxy http://`+up.addr+` \(network\.defaultAction "proxy"\)`)
		if strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Errorf("-d printed the upstream's password:\n%s", r.stderr)
		}
	})
	t.Run("config show", func(t *testing.T) {
		w := newWorld(t, os.Getuid(), network(up.addr))
		r := w.fence(t, "", nil, "config", "show")
		check(t, r, 0, `"upstreamProxy": "http://\*\*\*@`+up.addr+`"`, "")
		if strings.Contains(r.stdout+r.stderr, "s3cret") || strings.Contains(r.stdout, "alice") {
			t.Errorf("config show printed the credentials:\n%s", r.stdout)
		}
	})
}
