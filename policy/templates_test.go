package policy

import (
	"slices"
	"testing"
)

func TestTemplatesLoad(t *testing.T) {
	want := []string{"ci", "claude-code", "code", "code-relaxed", "code-strict", "codex", "default-deny", "disable-telemetry", "git-readonly", "local-dev-server", "read-only", "workspace-write"}
	if got := TemplateNames(); !slices.Equal(got, want) {
		t.Fatalf("TemplateNames() = %v, want %v", got, want)
	}
	for _, tmpl := range Templates() {
		t.Run(tmpl.Name, func(t *testing.T) {
			if tmpl.Summary == "" || tmpl.Summary[0] == '{' {
				t.Errorf("template %s has no summary line", tmpl.Name)
			}
			r, err := Load(Options{Template: tmpl.Name, Dir: "/work", Home: "/home/u", UserConfigDir: "/home/u/.config/fence"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Chain[0] != (Source{Kind: KindTemplate, Name: tmpl.Name}) {
				t.Errorf("chain starts with %v", r.Chain[0])
			}
			if len(r.Files) != 0 {
				t.Errorf("a builtin template read files: %v", r.Files)
			}
			for _, w := range Lint(r, "/work", "/home/u") {
				// claude-code names ~/.claude.json on purpose, and says so.
				if tmpl.Name == "claude-code" && w.Check == "agent-config-writable" {
					continue
				}
				t.Errorf("lint: %s", w)
			}
			checkSecretsDenied(t, r.Config)
		})
	}
}

// checkSecretsDenied requires every template to keep the canary secrets
// unreadable, whatever else it allows.
func checkSecretsDenied(t *testing.T, c Config) {
	t.Helper()
	for _, s := range CanarySecrets {
		p := Expand(s, "/work", "/home/u")
		if !slices.ContainsFunc(c.Filesystem.DenyRead, func(r string) bool { return Covers(Expand(r, "/work", "/home/u"), p, true) }) {
			t.Errorf("secret %s is not in denyRead", s)
		}
	}
	if !slices.Contains(c.Network.DeniedDomains, "169.254.169.254") {
		t.Errorf("the cloud metadata address is not denied")
	}
}

func TestTemplateShapes(t *testing.T) {
	load := func(name string) Config {
		r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Config
	}
	tests := []struct {
		name     string
		writable bool // allowWrite is not empty
		network  bool // allowedDomains is not empty
		denyRead bool // defaultDenyRead
		anyHost  bool // allowedDomains has "*"
	}{
		{"code", true, true, false, false},
		{"code-strict", true, true, true, false},
		{"code-relaxed", true, true, false, true},
		{"read-only", false, false, false, false},
		{"workspace-write", true, false, false, false},
		{"ci", true, true, false, false},
		{"default-deny", false, false, true, false},
		{"claude-code", true, true, false, false},
		{"codex", true, true, false, false},
		{"git-readonly", true, true, false, false},
		{"disable-telemetry", true, true, false, false},
		{"local-dev-server", true, false, false, false},
	}
	for _, tt := range tests {
		c := load(tt.name)
		got := [4]bool{len(c.Filesystem.AllowWrite) > 0, len(c.Network.AllowedDomains) > 0, c.Filesystem.DefaultDenyRead, slices.Contains(c.Network.AllowedDomains, "*")}
		if want := [4]bool{tt.writable, tt.network, tt.denyRead, tt.anyHost}; got != want {
			t.Errorf("%s: writable, network, defaultDenyRead, any host = %v, want %v", tt.name, got, want)
		}
	}
	if c := load("workspace-write"); !slices.Equal(c.Filesystem.AllowWrite, []string{"."}) {
		t.Errorf("workspace-write allowWrite = %v, want [.]", c.Filesystem.AllowWrite)
	}
	if c := load("code"); !slices.Contains(c.Command.Deny, "git push") || !slices.Contains(c.Command.Deny, "sudo") {
		t.Errorf("code does not deny git push and sudo: %v", c.Command.Deny)
	}
}

func TestLookupTemplateRejectsPaths(t *testing.T) {
	for _, name := range []string{"", "../code", "code.jsonc", "templates/code", "./code"} {
		if _, ok := LookupTemplate(name); ok {
			t.Errorf("LookupTemplate(%q) found a template", name)
		}
	}
}
