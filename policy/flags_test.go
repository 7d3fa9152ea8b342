package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestApplyFlags(t *testing.T) {
	base := Config{
		Network:    Network{AllowedDomains: []string{"example.com"}, AllowLocalBinding: ptr(true)},
		Filesystem: Filesystem{AllowWrite: []string{".", "/srv/out"}, DenyWrite: []string{"secrets"}},
		Command:    Command{Allow: []string{"git push origin"}},
		SSH:        SSH{AllowedHosts: []string{"git.example.com"}},
	}
	type query struct {
		access, path string
		allowed      bool
		rule         string
	}
	tests := []struct {
		name    string
		flags   Flags
		queries []query
		command string // judged when set
		denied  bool
		host    string // judged when set
		hostOK  bool
	}{
		{name: "none", queries: []query{{"write", "/w/x", true, "filesystem.allowWrite"}, {"write", "/srv/out/x", true, "filesystem.allowWrite"}},
			command: "git push origin main", host: "example.com", hostOK: true},
		{name: "read-only", flags: Flags{Mode: ModeReadOnly},
			queries: []query{{"write", "/w/x", false, "filesystem.allowWrite"}, {"write", "/tmp/x", true, "sandbox.privateTmp"}}},
		{name: "workspace-write", flags: Flags{Mode: ModeWorkspaceWrite},
			queries: []query{{"write", "/repo/x", true, "filesystem.allowWrite"}, {"write", "/srv/out/x", false, "filesystem.allowWrite"}}},
		{name: "full", flags: Flags{Mode: ModeFull},
			queries: []query{{"write", "/etc/x", true, "filesystem.allowWrite"}, {"write", "/w/secrets/k", false, "filesystem.denyWrite"}, {"write", "/w/.bashrc", false, "mandatory.shellStartup"}}},
		{name: "allow write does not beat a config deny", flags: Flags{AllowWrite: []string{"/w/secrets"}},
			queries: []query{{"write", "/w/secrets/k", false, "filesystem.denyWrite"}}},
		{name: "deny write beats a config allow", flags: Flags{DenyWrite: []string{"/srv/out"}},
			queries: []query{{"write", "/srv/out/x", false, "filesystem.denyWrite"}, {"write", "/w/x", true, "filesystem.allowWrite"}}},
		{name: "deny read", flags: Flags{DenyRead: []string{"/w/.env"}},
			queries: []query{{"read", "/w/.env", false, "filesystem.denyRead"}}},
		{name: "deny command beats a config allow", flags: Flags{DenyCommands: []string{"git push"}},
			command: "git push origin main", denied: true},
		{name: "no network", flags: Flags{NoNetwork: true}, host: "example.com"},
		{name: "deny domain", flags: Flags{DenyDomains: []string{"example.com"}}, host: "example.com"},
		{name: "allow domain", flags: Flags{AllowDomains: []string{"*.example.org"}}, host: "a.example.org", hostOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolved{Config: base, Chain: Chain{{Kind: KindProject, Path: "/w/fence.jsonc"}}, origins: map[string]Origin{}}
			if err := r.Apply(tt.flags, "/repo"); err != nil {
				t.Fatal(err)
			}
			if head := r.Chain[0].Kind; tt.flags.IsZero() != (head != KindCommandLine) {
				t.Errorf("chain head %s", head)
			}
			p := Compile(r.Config, Env{Dir: "/w", Home: "/h", Firm: r.FromCommandLine, Origin: func(k, v string) string {
				o, _ := r.Origin(k, v)
				return o.Source.Label()
			}})
			for _, q := range tt.queries {
				d := p.CheckPath(q.access, q.path, q.path)
				if d.Allowed != q.allowed || d.Rule != q.rule {
					t.Errorf("%s %s = %v %s, want %v %s", q.access, q.path, d.Allowed, d.Rule, q.allowed, q.rule)
				}
			}
			if tt.command != "" {
				d := p.DecideCommand(strings.Fields(tt.command))
				if d.Allowed == tt.denied {
					t.Errorf("%q allowed = %v", tt.command, d.Allowed)
				}
				if tt.denied && d.Rule.Origin != "command line" {
					t.Errorf("%q denied by a rule from %q, want the command line", tt.command, d.Rule.Origin)
				}
			}
			if tt.host != "" && p.DecideHost(tt.host).Allowed != tt.hostOK {
				t.Errorf("%s: %+v", tt.host, p.DecideHost(tt.host))
			}
		})
	}
}

func TestApplyFlagsNoNetworkClearsLocal(t *testing.T) {
	r := &Resolved{Config: Config{Network: Network{AllowLocalBinding: ptr(true), AllowAllUnixSockets: true, AllowUnixSockets: []string{"/run/x.sock"}}, SSH: SSH{AllowedHosts: []string{"h"}}}, origins: map[string]Origin{}}
	if err := r.Apply(Flags{NoNetwork: true}, "/w"); err != nil {
		t.Fatal(err)
	}
	p := Compile(r.Config, Env{Dir: "/w", Home: "/h"})
	if p.LocalBinding || p.AllUnixSockets || len(p.UnixSockets) > 0 || len(p.LocalOutboundPorts) > 0 || len(r.Config.SSH.AllowedHosts) > 0 {
		t.Errorf("--no-network left %+v", r.Config.Network)
	}
}

func TestApplyFlagsRefuses(t *testing.T) {
	star := Config{Network: Network{AllowedDomains: []string{"*"}}}
	tests := []struct {
		name  string
		cfg   Config
		flags Flags
		want  string
	}{
		{"unknown mode", Config{}, Flags{Mode: "rw"}, `--mode "rw"`},
		{"read-only with a write", Config{}, Flags{Mode: ModeReadOnly, AllowWrite: []string{"/x"}}, "drop --allow-write"},
		{"no network with a domain", Config{}, Flags{NoNetwork: true, AllowDomains: []string{"a.test"}}, "drop --allow-domain"},
		{"deny domain on the host network", star, Flags{DenyDomains: []string{"a.test"}}, "cannot be enforced"},
		{"allow every domain", Config{}, Flags{AllowDomains: []string{"*"}}, "host's network"},
		{"empty value", Config{}, Flags{DenyRead: []string{""}}, "empty value"},
		{"bad domain", Config{}, Flags{AllowDomains: []string{"*.test"}}, `--allow-domain "*.test": "*.test" would match a whole top-level domain`},
		{"bad command", Config{}, Flags{DenyCommands: []string{"  "}}, `--deny-command "  "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolved{Config: tt.cfg, origins: map[string]Origin{}}
			err := r.Apply(tt.flags, "/w")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Apply = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestWorkspaceRoot(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "a", "b")
	plain := t.TempDir()
	for dir, want := range map[string]string{repo: repo, sub: repo, plain: plain} {
		if got := WorkspaceRoot(dir); got != want {
			t.Errorf("WorkspaceRoot(%s) = %s, want %s", dir, got, want)
		}
	}
}

func TestLimitsTighter(t *testing.T) {
	cfg := RunLimits{Timeout: time.Minute, CPUSeconds: 10, OpenFiles: 64}
	run := RunLimits{Timeout: time.Hour, CPUSeconds: 5, FileSizeMB: 100}
	want := RunLimits{Timeout: time.Minute, CPUSeconds: 5, OpenFiles: 64, FileSizeMB: 100}
	if got := cfg.Tighter(run); got != want {
		t.Errorf("Tighter = %+v, want %+v", got, want)
	}
	if got := run.Tighter(cfg); got != want {
		t.Errorf("Tighter the other way = %+v, want %+v", got, want)
	}
}
