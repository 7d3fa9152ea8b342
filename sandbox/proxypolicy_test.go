package sandbox

import (
	"net/netip"
	"slices"
	"testing"
)

// TestProxyPolicy: the proxies judge by everything of the policy that
// bears on a connection, rebuilt from the plan alone.
func TestProxyPolicy(t *testing.T) {
	private := []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}
	tests := []struct {
		network string
		host    bool
	}{{"none", false}, {"host", true}}
	for _, tt := range tests {
		plan := &Plan{Network: tt.network, Proxy: &Proxy{AllowedDomains: []string{"a.test"}, DeniedDomains: []string{"b.test"}, LocalPorts: []int{5432}, AllowPrivateAddresses: private}}
		p := plan.ProxyPolicy()
		if p.HostNetwork != tt.host || !slices.Equal(p.AllowedDomains, []string{"a.test"}) || !slices.Equal(p.DeniedDomains, []string{"b.test"}) ||
			!slices.Equal(p.LocalOutboundPorts, []int{5432}) || !slices.Equal(p.AllowPrivateAddresses, private) {
			t.Errorf("ProxyPolicy() with network %s = %+v", tt.network, p)
		}
	}
	if p := (&Plan{}).ProxyPolicy(); p == nil || len(p.AllowedDomains) > 0 {
		t.Errorf("ProxyPolicy() without proxies = %+v, want an empty policy", p)
	}
}
