//go:build linux

package linux_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTunnelSNIFromInside opens CONNECT tunnels from inside the sandbox
// to a TLS server on the host's loopback that the policy allows by its
// address, and names a server in the ClientHello: a name the policy
// allows passes, a denied one (domain fronting) ends the tunnel with the
// rule named in the monitor's line.
func TestTunnelSNIFromInside(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.TLS.ServerName) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "127.0.0.1:" + port
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["127.0.0.1", "allowed.test"], "deniedDomains": ["evil.test"]}}`)
			r := w.fence(t, "", nil, "-m", "-c", "./netprobe tls "+target+"/allowed.test; ./netprobe tls "+target+"/evil.test")
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != 2 || lines[0] != "tls hello allowed.test" || !strings.Contains(lines[1], "access denied") {
				t.Errorf("through the tunnel: %q, want the allowed name's answer, then access denied\n%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, `blocked CONNECT `+target) || !strings.Contains(r.stderr, `"evil.test"`) || !strings.Contains(r.stderr, "network.deniedDomains") {
				t.Errorf("the monitor does not name the SNI and its rule:\n%s", r.stderr)
			}
		})
	}
}
