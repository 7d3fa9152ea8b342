package policy

import (
	"path"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestCheckPath(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{
		AllowWrite: []string{".", "/tmp/shared"}, DenyRead: []string{"**/*.pem", "~/.aws"}, DenyWrite: []string{"vendor"},
	}}, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	tests := []struct {
		access, path string
		allowed      bool
		rule         string
	}{
		{"read", "/w/main.go", true, "filesystem.allowWrite"},
		{"read", "/etc/passwd", true, "filesystem (reads are open)"},
		{"read", "/w/keys/SERVER.PEM", false, "filesystem.denyRead"},
		{"read", "/h/.aws/credentials", false, "filesystem.denyRead"},
		{"read", "/tmp/other", false, "sandbox.privateTmp"},
		{"read", "/tmp/shared/x", true, "filesystem.allowWrite"},
		{"write", "/w/main.go", true, "filesystem.allowWrite"},
		{"write", "/w/vendor/lib.go", false, "filesystem.denyWrite"},
		{"write", "/w/.bashrc", false, "mandatory.shellStartup"},
		{"write", "/w/.git/config", false, "mandatory.gitConfig"},
		{"write", "/w/fence.jsonc", false, "mandatory.configPath"},
		{"write", "/h/.config/fence/fence.jsonc", false, "mandatory.configPath"},
		{"write", "/etc/x", false, "filesystem.allowWrite"},
		{"write", "/tmp/scratch", true, "sandbox.privateTmp"},
		{"exec", "/usr/bin/git", true, "filesystem (reads are open)"},
	}
	for _, tt := range tests {
		d := p.CheckPath(tt.access, tt.path, tt.path)
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("CheckPath(%s, %s) = %v %s, want %v %s", tt.access, tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
	// The user config of a run without XDG_CONFIG_HOME, and this run's.
	xdg := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{".", "~", "/x"}}}, Env{Dir: "/w", Home: "/h", UserConfigDir: "/x/cfg/fence"})
	for _, tt := range []struct {
		path    string
		allowed bool
		rule    string
	}{
		{"/h/.config/fence/fence.jsonc", false, "mandatory.configPath"},
		{"/h/.config/fence/trust.json", false, "mandatory.configPath"},
		{"/h/.config/fence", false, "mandatory.configPath"},
		{"/x/cfg/fence/fence.json", false, "mandatory.configPath"},
		{"/x/cfg/fence/trust.json", false, "mandatory.configPath"},
		{"/h/.config/other/x", true, "filesystem.allowWrite"},
		{"/x/cfg/other/x", true, "filesystem.allowWrite"},
	} {
		if d := xdg.CheckPath("write", tt.path, tt.path); d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("XDG_CONFIG_HOME=/x/cfg: CheckPath(write, %s) = %v %s, want %v %s", tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
	inTmp := Compile(Config{}, Env{Dir: "/tmp/w", Home: "/h"})
	for path, want := range map[string]bool{"/tmp/w/out": false, "/tmp/scratch": true} {
		if d := inTmp.CheckPath("write", path, path); d.Allowed != want {
			t.Errorf("working directory in /tmp: write %s = %+v, want allowed %v (it is bound read-only)", path, d, want)
		}
	}
	// With reads open, allowRead below /tmp and a home there are bound
	// read-only into the private /tmp: readable, and a write is refused
	// naming the rule that binds them.
	open := Compile(Config{Filesystem: Filesystem{AllowRead: []string{"/tmp/data", "/var/data"}}}, Env{Dir: "/w", Home: "/tmp/h"})
	for _, tt := range []struct {
		access, path string
		allowed      bool
		rule         string
	}{
		{"read", "/tmp/data/x", true, "filesystem.allowRead"},
		{"write", "/tmp/data/x", false, "filesystem.allowRead"},
		{"read", "/tmp/h/notes", true, "home"},
		{"write", "/tmp/h/notes", false, "home"},
		{"read", "/tmp/other", false, "sandbox.privateTmp"},
		{"write", "/tmp/other", true, "sandbox.privateTmp"},
	} {
		if d := open.CheckPath(tt.access, tt.path, tt.path); d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("reads open, /tmp/data and a home below /tmp: CheckPath(%s, %s) = %v %s, want %v %s", tt.access, tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
	if len(open.Read) != 2 {
		t.Errorf("reads open: read rules %v, want the one below /tmp and the home", open.Read)
	}
	strict := Compile(Config{Filesystem: Filesystem{DefaultDenyRead: true}}, Env{Dir: "/w", Home: "/h"})
	if d := strict.CheckPath("read", "/h/notes", "/h/notes"); d.Allowed || d.Rule != "filesystem.defaultDenyRead" || d.Pattern != nil {
		t.Errorf("defaultDenyRead: %+v", d)
	}
	if d := strict.CheckPath("read", "/usr/lib/x", "/usr/lib/x"); !d.Allowed {
		t.Errorf("defaultDenyRead hides system paths: %+v", d)
	}
}

// BenchmarkCheckPath measures decisions per second for path queries
// under the code template (the issue asks for at least 100,000).
func BenchmarkCheckPath(b *testing.B) {
	r, err := Load(Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		b.Fatal(err)
	}
	p := Compile(r.Config, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	paths := []string{"/w/src/main.go", "/w/.env", "/h/.ssh/id_rsa", "/etc/hosts", "/w/a/b/c/d.pem", "/tmp/x"}
	i := 0
	for b.Loop() {
		p.CheckPath("write", paths[i%len(paths)], paths[i%len(paths)])
		i++
	}
}

// TestCheckPathBelowRoot runs in a subdirectory of a repository whose
// whole tree is writable: the repository's hooks stay protected.
func TestCheckPathBelowRoot(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"/r"}}}, Env{Dir: "/r/a/b", Root: "/r", Home: "/h"})
	tests := []struct {
		path    string
		allowed bool
		rule    string
	}{
		{"/r/.git/hooks/pre-commit", false, "mandatory.workspace"},
		{"/r/a/.vscode/settings.json", false, "mandatory.editor"},
		{"/r/a/b/.mcp.json", false, "mandatory.agentHooks"},
		{"/r/.git/config", false, "mandatory.gitConfig"},
		{"/r/src/main.go", true, "filesystem.allowWrite"},
		{"/other/.git/hooks/x", false, "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		if d := p.CheckPath("write", tt.path, tt.path); d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("write %s = %v %s, want %v %s", tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
}

// TestMayCoverIsNecessary: the quick test in front of the glob matcher
// never turns away a path the matcher covers.
func TestMayCoverIsNecessary(t *testing.T) {
	patterns := []string{
		"/w/**", "/w/**/.env", "/w/**/*.pem", "/h/.ssh/id_*", "/w/sub/**/secret", "/w/{a,b}/x", "/w/[ab]/c",
		"/**/.git/hooks", "/w/*/node_modules", `/w/a\*b`, "/w/**/x/", "/w?/y", "/", "/w/.env*", "/w/**/*",
		"/w/**/*.{pem,key}", "/w/**/*[ab]", `/w/**/*\*x`, "/w/**/id_?sa",
	}
	paths := []string{
		"/w", "/w/", "/w/.env", "/w/a/.env", "/w/a/.env/b", "/w/a/.envx", "/w/x.pem", "/w/a/b/c.pem/d",
		"/h/.ssh/id_rsa", "/h/.ssh/id_rsa/x", "/w/sub/secret", "/w/sub/a/secret/b", "/w/a/x", "/w/b/x/y",
		"/w/a/c", "/r/.git/hooks/pre-commit", "/w/p/node_modules/q", `/w/a*b`, "/w/a/x", "/wz/y", "/x",
		"/w/.envrc", "/w/sub", "/", "/w/q/x",
		"/w/k/a.key", "/w/k/a.key/z", "/w/k/qb", "/w/k/q*x", "/w/k/qx", "/w/id_rsa", "/w/k/id_dsa/x",
	}
	for _, pat := range patterns {
		for _, p := range paths {
			full := false
			for q := p; ; q = path.Dir(q) {
				if ok, _ := doublestar.Match(pat, q); ok {
					full = true
					break
				}
				if path.Dir(q) == q {
					break
				}
			}
			if full && !mayCover(pat, p) {
				t.Errorf("mayCover(%q, %q) = false, but the pattern covers the path", pat, p)
			}
			if got := coversGlob(pat, p); got != full {
				t.Errorf("coversGlob(%q, %q) = %v, want %v", pat, p, got, full)
			}
		}
	}
}
