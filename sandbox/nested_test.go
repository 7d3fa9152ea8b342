package sandbox

import (
	"strings"
	"testing"
)

// TestNestedWeaker: a nested run says in one line what it could not
// narrow, and in a second what of the network, when there is any.
func TestNestedWeaker(t *testing.T) {
	plan := &Plan{Network: "none", Mounts: Mounts{Devices: "minimal"}}
	if got := NestedWeaker(plan, false, true, ""); len(got) != 1 || !strings.Contains(got[0], "could not narrow modes and timestamps") || strings.Contains(got[0], "as root") {
		t.Errorf("NestedWeaker(user) = %q", got)
	}
	if got := NestedWeaker(plan, true, true, ""); len(got) != 1 || !strings.Contains(got[0], "as root, chmod and chown are refused") {
		t.Errorf("NestedWeaker(root) = %q", got)
	}
	got := NestedWeaker(plan, false, false, "the network's domains: X")
	if len(got) != 2 || got[1] != "inside a fence sandbox, this run could not narrow the network's domains: X" {
		t.Errorf("NestedWeaker(network) = %q", got)
	}
	if strings.Contains(got[0], "non-dumpable") {
		t.Errorf("NestedWeaker(not judged) names what judging costs: %q", got[0])
	}
}
