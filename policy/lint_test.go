package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLint(t *testing.T) {
	const home, dir = "/home/u", "/home/u/proj"
	tests := []struct {
		name  string
		dir   string
		cfg   Config
		files []string
		want  []string // "check: text", in order
	}{
		{name: "clean", cfg: Config{Filesystem: Filesystem{AllowWrite: []string{".", "/tmp"}, DenyRead: []string{"~/.ssh"}}}},
		{name: "home as workspace", dir: home,
			want: []string{`home-workspace: the working directory is your home directory, so "." in a rule means all of it: run fence from the project directory`}},
		{name: "top-level allow",
			cfg: Config{Filesystem: Filesystem{AllowRead: []string{"/"}, AllowWrite: []string{"/**"}, DenyRead: []string{"/etc/shadow", "~/.ssh", "~/.aws"}, DenyWrite: []string{"~/.ssh", "~/.aws"}}},
			want: []string{
				`broad-allow: filesystem.allowRead "/": opens the whole filesystem: list the directories the command needs`,
				`broad-allow: filesystem.allowWrite "/**": opens the whole filesystem: list the directories the command needs`,
			},
			files: []string{"/home/u/proj/fence.jsonc"}},
		{name: "brace pattern: every alternative is matched",
			cfg: Config{Filesystem: Filesystem{DenyRead: []string{"src/{a,b}"}, DenyWrite: []string{"**/*.{pem,key}"}}}},
		{name: "bare doublestar",
			cfg:  Config{Filesystem: Filesystem{DenyRead: []string{"**.env", "a/**/b", "src/**"}}},
			want: []string{`bare-doublestar: filesystem.denyRead "**.env": "**" spans directories only as a whole path segment; "**.env" matches within one name, like "*": write "**/" on its own`}},
		{name: "secret readable through a broad allow",
			cfg: Config{Filesystem: Filesystem{DefaultDenyRead: true, AllowRead: []string{"~"}}},
			want: []string{
				`secret-readable: filesystem.allowRead "~": makes the secret ~/.ssh/id_rsa readable: narrow the rule or add "~/.ssh/id_rsa" to filesystem.denyRead`,
				`secret-readable: filesystem.allowRead "~": makes the secret ~/.aws/credentials readable: narrow the rule or add "~/.aws/credentials" to filesystem.denyRead`,
			}},
		{name: "secret readable, but denied case-insensitively",
			cfg: Config{Filesystem: Filesystem{AllowRead: []string{"~/.ssh"}, DenyRead: []string{"~/.SSH/ID_*"}}}},
		{name: "secret writable",
			cfg:  Config{Filesystem: Filesystem{AllowWrite: []string{"~/.aws/**"}, DenyRead: []string{"~/.aws"}}},
			want: []string{}}, // denyRead also protects from writing
		{name: "secret writable, not denied",
			cfg: Config{Filesystem: Filesystem{AllowWrite: []string{"/etc"}}},
			want: []string{
				`secret-writable: filesystem.allowWrite "/etc": makes the secret /etc/shadow writable: narrow the rule or add "/etc/shadow" to filesystem.denyWrite`,
			}},
		{name: "secret readable through allowWrite under defaultDenyRead",
			cfg:  Config{Filesystem: Filesystem{DefaultDenyRead: true, AllowWrite: []string{"/etc"}, DenyWrite: []string{"/etc/shadow"}}},
			want: []string{`secret-readable: filesystem.allowWrite "/etc": makes the secret /etc/shadow readable: narrow the rule or add "/etc/shadow" to filesystem.denyRead`}},
		{name: "ssh writable through home: one finding, not one per key",
			cfg:  Config{Filesystem: Filesystem{AllowWrite: []string{"~"}, DenyWrite: []string{"~/.aws"}}},
			want: []string{`ssh-writable: filesystem.allowWrite "~": makes ~/.ssh writable: the command can replace the keys and known_hosts that ssh trusts outside the sandbox; narrow the rule or add "~/.ssh" to filesystem.denyWrite`}},
		{name: "ssh writable, keys denied",
			cfg:  Config{Filesystem: Filesystem{AllowWrite: []string{"~/.ssh/"}, DenyWrite: []string{"~/.ssh/id_*"}}},
			want: []string{`ssh-writable: filesystem.allowWrite "~/.ssh/": makes ~/.ssh writable: the command can replace the keys and known_hosts that ssh trusts outside the sandbox; narrow the rule or add "~/.ssh" to filesystem.denyWrite`}},
		{name: "ssh denied as a whole",
			cfg: Config{Filesystem: Filesystem{AllowWrite: []string{"~"}, DenyWrite: []string{"~/.SSH/**", "~/.aws"}}}},
		{name: "ssh denied from reading",
			cfg: Config{Filesystem: Filesystem{AllowWrite: []string{"~/**"}, DenyRead: []string{"~/.ssh", "~/.aws"}}}},
		{name: "one file in ssh, not the directory",
			cfg: Config{Filesystem: Filesystem{AllowWrite: []string{"~/.ssh/known_hosts"}}}},
		{name: "ssh writable and the key beside it through another rule",
			cfg: Config{Filesystem: Filesystem{AllowWrite: []string{"~/.ssh/id_rsa", "~/.ssh"}}},
			want: []string{
				`ssh-writable: filesystem.allowWrite "~/.ssh": makes ~/.ssh writable: the command can replace the keys and known_hosts that ssh trusts outside the sandbox; narrow the rule or add "~/.ssh" to filesystem.denyWrite`,
				`secret-writable: filesystem.allowWrite "~/.ssh/id_rsa": makes the secret ~/.ssh/id_rsa writable: narrow the rule or add "~/.ssh/id_rsa" to filesystem.denyWrite`,
			}},
		{name: "workspace rule over the project config",
			cfg:   Config{Filesystem: Filesystem{AllowWrite: []string{"."}}},
			files: []string{"/home/u/proj/fence.jsonc"}},
		{name: "rule naming the project config",
			cfg:   Config{Filesystem: Filesystem{AllowWrite: []string{"./fence.jsonc"}}},
			files: []string{"/home/u/proj/fence.jsonc"},
			want:  []string{`config-writable: filesystem.allowWrite "./fence.jsonc": covers the config file /home/u/proj/fence.jsonc: fence keeps config files read-only anyway, so narrow the rule`}},
		{name: "home rule over the user config",
			cfg:   Config{Filesystem: Filesystem{AllowWrite: []string{"~"}, DenyWrite: []string{"~/.ssh", "~/.aws"}}},
			files: []string{"/home/u/proj/fence.jsonc", "/home/u/.config/fence/fence.jsonc"},
			want:  []string{`config-writable: filesystem.allowWrite "~": covers the config file /home/u/.config/fence/fence.jsonc: fence keeps config files read-only anyway, so narrow the rule`}},
		{name: "config file writable",
			cfg:   Config{Filesystem: Filesystem{AllowWrite: []string{"~/.config"}}},
			files: []string{"/home/u/.config/fence/fence.jsonc"},
			want:  []string{`config-writable: filesystem.allowWrite "~/.config": covers the config file /home/u/.config/fence/fence.jsonc: fence keeps config files read-only anyway, so narrow the rule`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.dir
			if d == "" {
				d = dir
			}
			r := &Resolved{Config: tt.cfg, Files: tt.files}
			var got []string
			for _, w := range Lint(r, d, home) {
				got = append(got, w.Check+": "+w.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Lint =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestLintNamesWhereTheRuleIs(t *testing.T) {
	o := tree(t, map[string]string{"work/fence.jsonc": "{\n  \"filesystem\": {\"allowWrite\": [\"/\"]}}"})
	r, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	ws := Lint(r, o.Dir, o.Home)
	if len(ws) == 0 || ws[0].Where != "project config: "+o.Dir+"/fence.jsonc:2:33" {
		t.Fatalf("Lint = %+v, want the first warning at project config line 2", ws)
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		pattern, path string
		fold, want    bool
	}{
		{"/home/u/.ssh", "/home/u/.ssh/id_rsa", false, true},
		{"/home/u/.ssh/id_*", "/home/u/.ssh/id_rsa", false, true},
		{"/home/u/.ssh/id_*", "/home/u/.ssh/known_hosts", false, false},
		{"/w/**/.env", "/w/a/b/.env", false, true},
		{"/w/**/.env", "/w/.env", false, true},
		{"/w/**/*.pem", "/w/x/SERVER.PEM", false, false},
		{"/w/**/*.pem", "/w/x/SERVER.PEM", true, true},
		{"/", "/etc/shadow", false, true},
		{"/etc", "/etcetera", false, false},
	}
	for _, tt := range tests {
		if got := Covers(tt.pattern, tt.path, tt.fold); got != tt.want {
			t.Errorf("Covers(%q, %q, %v) = %v, want %v", tt.pattern, tt.path, tt.fold, got, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"~", "/h"}, {"~/x", "/h/x"}, {".", "/w"}, {"src/**", "/w/src/**"}, {"/a/../b", "/b"}, {"**/.env", "/w/**/.env"},
	}
	for _, tt := range tests {
		if got := Expand(tt.in, "/w", "/h"); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLintPathWritable(t *testing.T) {
	const home, dir = "/home/u", "/home/u/proj"
	path := []string{"/home/u/go/bin", "/usr/bin", "/home/u/proj/.venv/bin"}
	tests := []struct {
		name  string
		write []string
		want  []string
	}{
		{"through a parent: fence keeps it read-only", []string{"~", "."}, nil},
		{"named itself", []string{"~/go/bin", "./.venv/bin"}, []string{
			`path-writable: filesystem.allowWrite "~/go/bin": makes /home/u/go/bin, a directory on your PATH, writable: a program the command puts there runs outside the sandbox the next time its name is typed`,
			`path-writable: filesystem.allowWrite "./.venv/bin": makes /home/u/proj/.venv/bin, a directory on your PATH, writable: a program the command puts there runs outside the sandbox the next time its name is typed`,
		}},
		{"a stock profile directory", []string{"~/.local/bin/"}, []string{
			`path-writable: filesystem.allowWrite "~/.local/bin/": makes /home/u/.local/bin, a directory the stock ~/.profile puts on PATH, writable: a program the command puts there runs outside the sandbox the next time its name is typed`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolved{Config: Config{Filesystem: Filesystem{AllowWrite: tt.write}}}
			var got []string
			for _, w := range Lint(r, dir, home, path...) {
				if w.Check == "path-writable" {
					got = append(got, w.Check+": "+w.String())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Lint =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestBraceAlternativesAreDenied is why lint does not warn about braces:
// a deny rule with {a,b} denies each alternative, nested ones and ones
// holding a "/" included, and nothing else.
func TestBraceAlternativesAreDenied(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{
		AllowWrite: []string{"."},
		DenyRead:   []string{"src/{a,b}", "n/{x,{y,z}}"},
		DenyWrite:  []string{"**/*.{pem,key}", "{conf/c,d}.json"},
	}}, Env{Dir: "/w", Home: "/h"})
	tests := []struct {
		access, path string
		allowed      bool
		rule         string
	}{
		{"read", "/w/src/a/f", false, "filesystem.denyRead"},
		{"read", "/w/src/b/f", false, "filesystem.denyRead"},
		{"write", "/w/src/b", false, "filesystem.denyRead"},
		{"read", "/w/src/ab/f", true, "filesystem.allowWrite"},
		{"read", "/w/src/c/f", true, "filesystem.allowWrite"},
		{"read", "/w/n/x/f", false, "filesystem.denyRead"},
		{"read", "/w/n/z/f", false, "filesystem.denyRead"},
		{"write", "/w/k/SERVER.KEY", false, "filesystem.denyWrite"},
		{"write", "/w/k/a.pem", false, "filesystem.denyWrite"},
		{"write", "/w/k/a.crt", true, "filesystem.allowWrite"},
		{"write", "/w/conf/c.json", false, "filesystem.denyWrite"},
		{"write", "/w/d.json", false, "filesystem.denyWrite"},
		{"write", "/w/conf/d.json", true, "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		if d := p.CheckPath(tt.access, tt.path, tt.path); d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("CheckPath(%s, %s) = %v %s, want %v %s", tt.access, tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
}

// TestRunWarnings: a run states lint's ssh-writable finding, and no other.
func TestRunWarnings(t *testing.T) {
	const home, dir = "/home/u", "/home/u/proj"
	tests := []struct {
		write, deny []string
		want        string // the rule warned about, "" for none
	}{
		{[]string{"/"}, nil, "/"},
		{[]string{"/home"}, nil, "/home"},
		{[]string{".", "~"}, nil, "~"},
		{[]string{"~/.ssh"}, nil, "~/.ssh"},
		{[]string{"/**"}, []string{"~/.ssh"}, ""},
		{[]string{"."}, nil, ""},
		{[]string{"/etc", "~/.aws"}, nil, ""},
	}
	for _, tt := range tests {
		r := &Resolved{Config: Config{Filesystem: Filesystem{AllowWrite: tt.write, DenyWrite: tt.deny}}}
		ws := RunWarnings(r, dir, home)
		got := ""
		for _, w := range ws {
			if w.Check != "ssh-writable" {
				t.Errorf("RunWarnings(allowWrite %q) holds %s: %s", tt.write, w.Check, w)
			}
			got = w.Value
		}
		if got != tt.want || len(ws) > 1 {
			t.Errorf("RunWarnings(allowWrite %q, denyWrite %q) = %v, want one for %q", tt.write, tt.deny, ws, tt.want)
		}
	}
}

// TestEmptyConfig: a file with nothing but whitespace and comments is no
// config, and Resolved names it; "{}" is a config that sets nothing.
func TestEmptyConfig(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		settings string
		empty    string // the file EmptyConfig names, relative to the tree
	}{
		{"zero bytes", map[string]string{"work/fence.jsonc": ""}, "", "work/fence.jsonc"},
		{"comments and whitespace", map[string]string{"work/fence.jsonc": "// soon\n\n/* more */ \t\n"}, "", "work/fence.jsonc"},
		{"empty object", map[string]string{"work/fence.jsonc": "{}"}, "", ""},
		{"empty user config", map[string]string{"home/.config/fence/fence.jsonc": "\n"}, "", "home/.config/fence/fence.jsonc"},
		{"empty settings file", map[string]string{"s.jsonc": "// x"}, "../s.jsonc", "s.jsonc"},
		{"no file at all", nil, "", ""},
		{"empty user config below a project", map[string]string{"work/fence.jsonc": `{"extends": "@base"}`, "home/.config/fence/fence.jsonc": ""}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tree(t, tt.files)
			o.Settings = tt.settings
			r, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tt.empty != "" {
				want = filepath.Join(filepath.Dir(o.Dir), tt.empty)
			}
			if got := r.EmptyConfig(); got != want {
				t.Errorf("EmptyConfig() = %q, want %q (chain %v)", got, want, r.Chain)
			}
		})
	}
}
