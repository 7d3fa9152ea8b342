package cmd

import (
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestCheckURLForwarded: `fence check url` answers "forwarded to the
// upstream proxy" for what no domain rule names under defaultAction
// "proxy", whatever host the upstream is on; a denied host, and an
// address the address rules refuse, are denied as before.
func TestCheckURLForwarded(t *testing.T) {
	pol := policy.Compile(policy.Config{Network: policy.Network{
		AllowedDomains: []string{"allowed.test"},
		DeniedDomains:  []string{"denied.test"},
		DefaultAction:  "proxy",
		UpstreamProxy:  "http://alice:s3cret@proxy.corp.test:3128",
	}}, policy.Env{})
	tests := []struct {
		url     string
		allowed bool
		rule    string
		note    string
	}{
		{"https://other.test/x", true, "network.defaultAction", "forwarded to the upstream proxy http://proxy.corp.test:3128"},
		{"http://8.8.8.8/", true, "network.defaultAction", "forwarded to the upstream proxy"},
		{"https://allowed.test/", true, "network.allowedDomains", ""},
		{"https://denied.test/", false, "network.deniedDomains", ""},
		{"http://10.1.2.3/", false, "sandbox.privateAddress", ""},
		{"http://169.254.169.254/latest", false, "sandbox.metadataAddress", ""},
		{"http://127.0.0.1:8080/", false, "sandbox.loopbackAddress", ""},
	}
	for _, tt := range tests {
		d, err := urlDecision(pol, tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != tt.allowed || d.Rule != tt.rule || !strings.Contains(d.Note, tt.note) || tt.note == "" && d.Note != "" {
			t.Errorf("urlDecision(%q) = %v %q note %q, want %v %q note %q", tt.url, d.Allowed, d.Rule, d.Note, tt.allowed, tt.rule, tt.note)
		}
		if strings.Contains(d.Note+d.Suggestion, "s3cret") {
			t.Errorf("urlDecision(%q) shows the password: %+v", tt.url, d)
		}
	}
}
