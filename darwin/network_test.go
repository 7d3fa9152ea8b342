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

// TestNetworkDebug: -d says what the loopback rules above do.
func TestNetworkDebug(t *testing.T) {
	yes := &[]bool{true}[0]
	for _, tc := range []struct {
		net  policy.Network
		want string
	}{
		{policy.Network{AllowLocalBinding: yes, AllowLocalOutboundPorts: []int{5432}}, "servers may listen on loopback (network.allowLocalBinding true); the host's loopback is reached at the proxies' ports and the ports [5432]"},
		{policy.Network{}, "servers may not listen"},
		{policy.Network{AllowedDomains: []string{"*"}}, "the network is the host's; servers may not listen"},
	} {
		plan, err := sandbox.NewPlan(policy.Compile(policy.Config{Network: tc.net}, testEnv), sandbox.Options{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := NetworkDebug(plan); !strings.Contains(got, tc.want) {
			t.Errorf("NetworkDebug(%+v) = %q, want it to say %q", tc.net, got, tc.want)
		}
	}
}
