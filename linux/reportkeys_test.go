//go:build linux

package linux_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReportKeys: a report holds every key the README lists, even when
// empty; its chain names the policy flags; and a connection refused
// under --no-network names the flag instead of suggesting a domain
// grant.
func TestReportKeys(t *testing.T) {
	keys := []string{"command", "shell", "dir", "start", "end", "exitCode", "error", "chain", "denials"}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["example.com"]}}`)
			r := w.fence(t, "", nil, "--report", w.base+"/run.json", "--no-network", "--deny-command", "git push", "--", "./netprobe", "connect", "example.com:443")
			check(t, r, 0, `^HTTP/1.1 403 Forbidden\n$`, "")
			b, err := os.ReadFile(w.base + "/run.json")
			must(t, err)
			var rep map[string]json.RawMessage
			must(t, json.Unmarshal(b, &rep))
			for _, k := range keys {
				if _, ok := rep[k]; !ok {
					t.Errorf("report lacks %q:\n%s", k, b)
				}
			}
			var got struct {
				Chain []struct {
					Kind, Flags string
				}
				Denials []struct {
					Rule, Source, Suggestion string
				}
			}
			must(t, json.Unmarshal(b, &got))
			if i := slices.IndexFunc(got.Chain, func(c struct{ Kind, Flags string }) bool { return c.Kind == "command-line" }); i != 0 || got.Chain[0].Flags != `--no-network --deny-command="git push"` {
				t.Errorf("the chain does not start with the flags: %+v", got.Chain)
			}
			if len(got.Denials) != 1 {
				t.Fatalf("denials %+v, want one", got.Denials)
			}
			d := got.Denials[0]
			if strings.Contains(d.Suggestion, "fence config allow domain") || !strings.Contains(d.Suggestion, "--no-network") || d.Source != "command line: --no-network" {
				t.Errorf("a refusal under --no-network: %+v", d)
			}
		})
	}
}
