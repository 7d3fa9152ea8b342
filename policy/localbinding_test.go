package policy

import "testing"

// TestLocalBinding: network.allowLocalBinding unset lets servers listen
// in the sandbox's own network namespace only; true anywhere; false
// nowhere; a child's value wins over its parent's, false included; and
// --no-network, which takes every way out away, leaves servers in the
// namespace alone (an offline test run), even over a config's true.
func TestLocalBinding(t *testing.T) {
	on, off := true, false
	tests := []struct {
		name                string
		n                   Network
		anywhere, namespace bool
		effective           bool // localBindingInNamespace
	}{
		{"unset", Network{}, false, true, true},
		{"unset, host network", Network{AllowedDomains: []string{"*"}}, false, true, false},
		{"true", Network{AllowLocalBinding: &on}, true, true, true},
		{"false", Network{AllowLocalBinding: &off}, false, false, false},
	}
	for _, tt := range tests {
		p := Compile(Config{Network: tt.n}, Env{Dir: "/w", Home: "/h"})
		if p.LocalBinding != tt.anywhere || p.NamespaceBinding != tt.namespace {
			t.Errorf("%s: LocalBinding %v, NamespaceBinding %v, want %v, %v", tt.name, p.LocalBinding, p.NamespaceBinding, tt.anywhere, tt.namespace)
		}
		if got := p.Effective().Network.NamespaceBinding; got != tt.effective {
			t.Errorf("%s: effective localBindingInNamespace %v, want %v", tt.name, got, tt.effective)
		}
	}
	merged := Merge(Config{Network: Network{AllowLocalBinding: &on}}, Config{Network: Network{AllowLocalBinding: &off}})
	if b := merged.Network.AllowLocalBinding; b == nil || *b {
		t.Errorf("Merge(true, false) = %v, want false", b)
	}
	r := &Resolved{Config: Config{Network: Network{AllowLocalBinding: &on}}, origins: map[string]Origin{}}
	if err := r.Apply(Flags{NoNetwork: true}, "/w"); err != nil {
		t.Fatal(err)
	}
	if p := Compile(r.Config, Env{Dir: "/w", Home: "/h"}); p.LocalBinding || !p.NamespaceBinding {
		t.Errorf("--no-network: LocalBinding %v, NamespaceBinding %v, want false, true", p.LocalBinding, p.NamespaceBinding)
	}
}
