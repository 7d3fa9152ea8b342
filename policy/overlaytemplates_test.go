package policy

import (
	"slices"
	"strings"
	"testing"
)

// compileTemplate loads the builtin template name, or a config that
// extends it, and compiles it for a workspace /w and a home /h.
func compileTemplate(t *testing.T, name string) *Policy {
	t.Helper()
	r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		t.Fatal(err)
	}
	return Compile(r.Config, Env{Dir: "/w", Home: "/h"})
}

// TestGitReadonlyCommands: git-readonly denies what destroys work or
// history, each by the rule that names it, and lets everyday git and
// file commands through; it judges every exec, so the rules hold for
// what an agent's shell runs too.
func TestGitReadonlyCommands(t *testing.T) {
	p := compileTemplate(t, "git-readonly")
	if p.RuntimeExec != "argv" {
		t.Errorf("runtimeExecPolicy = %q, want argv", p.RuntimeExec)
	}
	tests := []struct {
		line string
		rule string // the deny rule that refuses it; "" for allowed
	}{
		{"git push origin main", "git push"},
		{"git push --force-with-lease", "git push"},
		{"git reset --hard HEAD~1", "git reset --hard"},
		{"git checkout-index -f -a", "git checkout-index -f"},
		{"git checkout-index --force --all", "git checkout-index --force"},
		{"git read-tree -u --reset HEAD", "git read-tree -u"},
		{"git read-tree --reset HEAD", "git read-tree --reset"},
		{"rm --recu d", "rm --recursive"},
		{"git reset --har", "git reset --hard"},
		{"git commit --amen", "git commit --amend"},
		{"git reset --soft HEAD~1", ""},
		{"rm --recursive d", "rm --recursive"},
		{"git -C sub reset --hard", "git reset --hard"},
		{"git clean -fdx", "git clean"},
		{"git clean -f", "git clean"},
		{"git checkout -- main.go", "git checkout --"},
		{"git checkout HEAD -- .", "git checkout --"},
		{"git checkout .", "git checkout ."},
		{"git checkout -f main", "git checkout -f"},
		{"git restore main.go", "git restore"},
		{"git restore --staged --worktree main.go", "git restore"},
		{"git switch --discard-changes main", "git switch --discard-changes"},
		{"git rebase -i HEAD~3", "git rebase"},
		{"git commit --amend --no-edit", "git commit --amend"},
		{"git branch -D topic", "git branch -D"},
		{"git branch -f main HEAD~2", "git branch -f"},
		{"git checkout -B main origin/main", "git checkout -B"},
		{"git tag -d v1.0", "git tag -d"},
		{"git stash drop", "git stash drop"},
		{"git stash clear", "git stash clear"},
		{"git filter-branch --tree-filter x HEAD", "git filter-branch"},
		{"git gc --prune=now", "git gc --prune"},
		{"git prune", "git prune"},
		{"git reflog expire --expire=now --all", "git reflog expire"},
		{"git update-ref -d refs/heads/topic", "git update-ref"},
		{"git worktree remove --force ../wt", "git worktree remove --force"},
		{"git-reset --hard", "git reset --hard"},
		{"rm -rf build", "rm -[rR]*"},
		{"rm -R build", "rm -[rR]*"},
		{"rm -fr build", "rm -[a-zA-Z]*[rR]*"},
		{"rm -vRf build", "rm -[a-zA-Z]*[rR]*"},
		{"rm --recursive build", "rm --recursive"},
		{"/bin/rm -r build", "rm -[rR]*"},
		{"find . -name *.o -delete", "find -delete"},
		{"shred secret.txt", "shred"},
		{"git status", ""},
		{"git diff HEAD~1", ""},
		{"git log --oneline", ""},
		{"git add -A", ""},
		{"git commit -m fix", ""},
		{"git switch -c topic", ""},
		{"git checkout main", ""},
		{"git branch -d merged", ""},
		{"git stash", ""},
		{"git stash pop", ""},
		{"git fetch origin", ""},
		{"git reset HEAD main.go", ""},
		{"git reset --soft HEAD~1", ""},
		{"git clean -n", ""},
		{"git clean --dry-run -d", ""},
		{"git gc", ""},
		{"rm main.o", ""},
		{"rm -f main.o", ""},
		{"rm --force main.o", ""},
		{"find . -name *.o", ""},
	}
	for _, tt := range tests {
		d := p.DecideCommand(strings.Fields(tt.line))
		switch {
		case tt.rule == "" && !d.Allowed:
			t.Errorf("%q: denied by %q, want allowed", tt.line, d.Rule.Text)
		case tt.rule != "" && d.Allowed:
			t.Errorf("%q: allowed, want denied by %q", tt.line, tt.rule)
		case tt.rule != "" && d.Rule.Text != tt.rule:
			t.Errorf("%q: denied by %q, want %q", tt.line, d.Rule.Text, tt.rule)
		}
	}
}

// TestDisableTelemetryDomains: disable-telemetry denies the analytics
// and error-reporting hosts by name, the service's own name and its
// subdomains, still reaches what code reaches, and keeps them denied
// when a config on top allows every domain.
func TestDisableTelemetryDomains(t *testing.T) {
	p := compileTemplate(t, "disable-telemetry")
	for _, h := range []string{
		"sentry.io", "o123.ingest.sentry.io", "o1.ingest.us.sentry.io", "api.segment.io", "cdn.segment.com",
		"api.mixpanel.com", "api2.amplitude.com", "us.i.posthog.com", "featuregates.statsig.com",
		"events.launchdarkly.com", "http-intake.logs.datadoghq.com", "notify.bugsnag.com",
		"api.rollbar.com", "api.honeycomb.io", "telemetry.go.dev", "APP.PostHog.com.",
	} {
		if d := p.DecideHost(h); d.Allowed || d.Key != "network.deniedDomains" {
			t.Errorf("%s: allowed %v by %q, want denied by network.deniedDomains", h, d.Allowed, d.Rule)
		}
	}
	for _, h := range []string{"api.github.com", "registry.npmjs.org", "api.anthropic.com"} {
		if d := p.DecideHost(h); !d.Allowed {
			t.Errorf("%s: %s, want allowed as in code", h, d.Reason)
		}
	}
	open := Compile(Merge(mustTemplate(t, "disable-telemetry"), Config{Network: Network{AllowedDomains: []string{"*"}}}), Env{Dir: "/w", Home: "/h"})
	if d := open.DecideHost("o1.ingest.sentry.io"); d.Allowed {
		t.Errorf("with allowedDomains *, o1.ingest.sentry.io is allowed by %q", d.Rule)
	}
	if d := open.DecideHost("example.org"); !d.Allowed {
		t.Errorf("with allowedDomains *, example.org: %s", d.Reason)
	}
}

// mustTemplate is the resolved config of the builtin template name.
func mustTemplate(t *testing.T, name string) Config {
	t.Helper()
	r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		t.Fatal(err)
	}
	return r.Config
}

// TestLocalDevServer: local-dev-server lets servers listen (in the
// sandbox's namespace and on a shared host network), makes the working
// directory and the private /tmp writable, relays only the host ports a config on
// top lists, and reaches no domain.
func TestLocalDevServer(t *testing.T) {
	p := compileTemplate(t, "local-dev-server")
	if !p.LocalBinding || !p.NamespaceBinding {
		t.Errorf("LocalBinding %v, NamespaceBinding %v, want true, true", p.LocalBinding, p.NamespaceBinding)
	}
	if len(p.LocalOutboundPorts) != 0 {
		t.Errorf("relays host ports %v, want none until a config lists them", p.LocalOutboundPorts)
	}
	for path, want := range map[string]bool{"/w/src/app.js": true, "/tmp/vite-cache": true, "/h/.bashrc": false, "/h/.ssh/id_rsa": false} {
		if got := p.CheckPath("write", path, path).Allowed; got != want {
			t.Errorf("write %s: allowed %v, want %v", path, got, want)
		}
	}
	if c := mustTemplate(t, "local-dev-server"); slices.Contains(c.Filesystem.AllowWrite, "/tmp") {
		t.Errorf("allowWrite %v shares the host's /tmp", c.Filesystem.AllowWrite)
	}
	if d := p.DecideHost("registry.npmjs.org"); d.Allowed {
		t.Errorf("registry.npmjs.org allowed by %q, want no domain reachable", d.Rule)
	}
	c := Merge(mustTemplate(t, "local-dev-server"), Config{Network: Network{AllowLocalOutboundPorts: []int{5432}}})
	if got := Compile(c, Env{Dir: "/w", Home: "/h"}).LocalOutboundPorts; !slices.Equal(got, []int{5432}) {
		t.Errorf("with allowLocalOutboundPorts [5432] on top, relayed ports = %v, want [5432]", got)
	}
}
