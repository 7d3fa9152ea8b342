package cmd

import (
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/sandbox"
)

// TestBindingDebug: -d names where servers may listen for each network
// and TCP layer.
func TestBindingDebug(t *testing.T) {
	tests := []struct {
		network string
		tcp     *sandbox.LandlockTCP
		want    string
	}{
		{"none", nil, "servers may listen in the sandbox's own network namespace"},
		{"none", &sandbox.LandlockTCP{Connect: []int{3128, 1080}, Bind: []int{8080}}, "connect only to ports [3128 1080], bind only to [8080]"},
		{"host", &sandbox.LandlockTCP{AnyConnect: true}, "TCP servers are refused"},
		{"host", nil, "servers listen on the host's network"},
	}
	for _, tt := range tests {
		p := &sandbox.Plan{Network: tt.network, Landlock: sandbox.Landlock{TCP: tt.tcp}}
		if got := bindingDebug(p); !strings.Contains(got, tt.want) {
			t.Errorf("bindingDebug(%s, %+v) = %q, want it to say %q", tt.network, tt.tcp, got, tt.want)
		}
	}
}
