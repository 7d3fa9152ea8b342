package policy

import (
	"strings"
	"testing"
)

// TestLintLocalOutboundWithoutPorts: allowLocalOutbound true with no
// allowLocalOutboundPorts opens nothing, and lint says so; with ports,
// or left null, it says nothing.
func TestLintLocalOutboundWithoutPorts(t *testing.T) {
	on, off := true, false
	const want = "local-outbound-no-ports: network.allowLocalOutbound is true but network.allowLocalOutboundPorts lists no port"
	tests := []struct {
		name string
		n    Network
		warn bool
	}{
		{"true without ports", Network{AllowLocalOutbound: &on}, true},
		{"true with ports", Network{AllowLocalOutbound: &on, AllowLocalOutboundPorts: []int{5432}}, false},
		{"false", Network{AllowLocalOutbound: &off}, false},
		{"null with local binding", Network{AllowLocalBinding: &on}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolved{Config: Config{Network: tt.n}, origins: map[string]Origin{}}
			var got []string
			for _, w := range Lint(r, "/home/u/proj", "/home/u") {
				got = append(got, w.Check+": "+w.String())
			}
			found := false
			for _, g := range got {
				found = found || strings.HasPrefix(g, want)
			}
			if found != tt.warn {
				t.Errorf("Lint(%+v) = %q, want the warning: %v", tt.n, got, tt.warn)
			}
		})
	}
}

// TestRunWarnsLocalOutboundWithoutPorts: a run says it too.
func TestRunWarnsLocalOutboundWithoutPorts(t *testing.T) {
	on := true
	r := &Resolved{Config: Config{Network: Network{AllowLocalOutbound: &on}}, origins: map[string]Origin{}}
	ws := RunWarnings(r, "/home/u/proj", "/home/u")
	if len(ws) != 1 || ws[0].Check != "local-outbound-no-ports" {
		t.Errorf("RunWarnings = %+v, want the local-outbound-no-ports warning", ws)
	}
}
