package sandbox

import (
	"strconv"
	"testing"
)

// TestCheckForward: a -p port on a proxy's port or a relayed local port
// is refused, naming the key; another port passes.
func TestCheckForward(t *testing.T) {
	p := &Proxy{HTTPPort: 3128, SOCKSPort: 1080, LocalPorts: []int{5432}}
	tests := []struct {
		port int
		want string
	}{
		{3128, "-p 127.0.0.1:3128: port 3128 is the HTTP proxy's inside the sandbox (network.httpProxyPort): expose another port, or move the proxy"},
		{1080, "-p 127.0.0.1:1080: port 1080 is the SOCKS5 proxy's inside the sandbox (network.socksProxyPort): expose another port, or move the proxy"},
		{5432, "-p 127.0.0.1:5432: port 5432 is relayed into the sandbox from the host (network.allowLocalOutboundPorts), so no server inside can listen on it"},
		{8080, ""},
	}
	for _, tt := range tests {
		f, err := ParseForward(strconv.Itoa(tt.port))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := p.CheckForward(f); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckForward(%d) = %q, want %q", tt.port, got, tt.want)
		}
	}
}
