package darwin

import (
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestNetworkRules: the host's loopback is reached only at the proxies'
// ports and the ports the policy relays, allowLocalBinding or not; with
// the host's network, servers listen only with allowLocalBinding.
func TestNetworkRules(t *testing.T) {
	yes, no := &[]bool{true}[0], &[]bool{false}[0]
	for _, tc := range []struct {
		name      string
		net       policy.Network
		want, not []string
	}{
		{name: "binding, no local outbound", net: policy.Network{AllowLocalBinding: yes, AllowLocalOutbound: no},
			want: []string{`(allow network-bind network-inbound (local ip "localhost:*"))`, `(allow network-outbound (remote ip "localhost:3128") (remote ip "localhost:1080"))`},
			not:  []string{`(remote ip "localhost:*")`, `(local ip "*:*")`}},
		{name: "binding and a relayed port", net: policy.Network{AllowLocalBinding: yes, AllowLocalOutboundPorts: []int{5432}},
			want: []string{`(allow network-outbound (remote ip "localhost:5432"))`},
			not:  []string{`(remote ip "localhost:*")`}},
		{name: "host network", net: policy.Network{AllowedDomains: []string{"*"}},
			want: []string{`(allow network-outbound (remote ip "*:*"))`},
			not:  []string{"network-bind network-inbound", "network-inbound"}},
		{name: "host network with binding", net: policy.Network{AllowedDomains: []string{"*"}, AllowLocalBinding: yes},
			want: []string{`(allow network-bind network-inbound (local ip "*:*"))`}},
	} {
		pol := policy.Compile(policy.Config{Network: tc.net}, testEnv)
		plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		in := InputFromPlan(plan, testOptions, testFinder)
		p, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(p, "\n")
		for _, w := range tc.want {
			if !slices.Contains(lines, w) {
				t.Errorf("%s: no line %s in:\n%s", tc.name, w, p)
			}
		}
		for _, n := range tc.not {
			if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "(allow") && strings.Contains(l, n) }) {
				t.Errorf("%s: an allow holds %s:\n%s", tc.name, n, p)
			}
		}
	}
}
