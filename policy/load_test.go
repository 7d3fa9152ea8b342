package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path relative to root -> content) and returns Options
// rooted there: working directory root/work, home root/home.
func tree(t testing.TB, files map[string]string) Options {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"work", "home"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Options{
		Dir:           filepath.Join(root, "work"),
		Home:          filepath.Join(root, "home"),
		UserConfigDir: filepath.Join(root, "home/.config/fence"),
	}
}

// chainText is the chain with the temporary root replaced by "R".
func chainText(o Options, c Chain) string {
	root := filepath.Dir(o.Dir)
	var parts []string
	for _, s := range c {
		parts = append(parts, strings.ReplaceAll(s.Label(), root, "R"))
	}
	return strings.Join(parts, " | ")
}

func TestLoadExtends(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		settings  string
		wantChain string
		wantRead  []string // resolved filesystem.allowRead
	}{
		{
			name: "relative file, then template",
			files: map[string]string{
				"work/fence.jsonc":     `{"extends": "./conf/base.jsonc", "filesystem": {"allowRead": ["work"]}}`,
				"work/conf/base.jsonc": `{"extends": "../../shared/more.json", "filesystem": {"allowRead": ["base"]}}`,
				"shared/more.json":     `{"extends": "default-deny", "filesystem": {"allowRead": ["more", "base"]}}`,
			},
			wantChain: "project config: R/work/fence.jsonc | file: R/work/conf/base.jsonc | file: R/shared/more.json | builtin template: default-deny | builtin template: read-only",
			wantRead:  []string{"more", "base", "work"},
		},
		{
			name: "home-relative file",
			files: map[string]string{
				"work/fence.jsonc":      `{"extends": "~/policies/x.jsonc"}`,
				"home/policies/x.jsonc": `{"filesystem": {"allowRead": ["x"]}}`,
			},
			wantChain: "project config: R/work/fence.jsonc | file: R/home/policies/x.jsonc",
			wantRead:  []string{"x"},
		},
		{
			name: "@base with a user config",
			files: map[string]string{
				"work/fence.jsonc":              `{"extends": "@base", "filesystem": {"allowRead": ["p"]}}`,
				"home/.config/fence/fence.json": `{"filesystem": {"allowRead": ["u"]}}`,
			},
			wantChain: "project config: R/work/fence.jsonc | @base user config: R/home/.config/fence/fence.json",
			wantRead:  []string{"u", "p"},
		},
		{
			name:      "@base without a user config",
			files:     map[string]string{"work/fence.jsonc": `{"extends": "@base"}`},
			wantChain: "project config: R/work/fence.jsonc | @base builtin default (no config loaded from R/home/.config/fence/fence.jsonc)",
		},
		{
			name: "@base with an empty user config",
			files: map[string]string{
				"work/fence.jsonc":               `{"extends": "@base"}`,
				"home/.config/fence/fence.jsonc": "// empty\n",
			},
			wantChain: "project config: R/work/fence.jsonc | @base builtin default (no config loaded from R/home/.config/fence/fence.jsonc)",
		},
		{
			name: "file path that is the user config",
			files: map[string]string{
				"work/fence.jsonc":               `{"extends": "~/.config/fence/fence.jsonc"}`,
				"home/.config/fence/fence.jsonc": `{"filesystem": {"allowRead": ["u"]}}`,
			},
			wantChain: "project config: R/work/fence.jsonc | user config: R/home/.config/fence/fence.jsonc",
			wantRead:  []string{"u"},
		},
		{
			name: "empty extended file",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./e.jsonc", "filesystem": {"allowRead": ["p"]}}`,
				"work/e.jsonc":     ``,
			},
			wantChain: "project config: R/work/fence.jsonc | file: R/work/e.jsonc",
			wantRead:  []string{"p"},
		},
		{
			name: "settings file extends relative to itself",
			files: map[string]string{
				"elsewhere/s.jsonc": `{"extends": "./t.jsonc"}`,
				"elsewhere/t.jsonc": `{"filesystem": {"allowRead": ["t"]}}`,
			},
			settings:  "../elsewhere/s.jsonc",
			wantChain: "settings file: R/elsewhere/s.jsonc | file: R/elsewhere/t.jsonc",
			wantRead:  []string{"t"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tree(t, tt.files)
			o.Settings = tt.settings
			r, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := chainText(o, r.Chain); got != tt.wantChain {
				t.Errorf("chain =\n  %s\nwant\n  %s", got, tt.wantChain)
			}
			if got := fmt.Sprint(r.Config.Filesystem.AllowRead); got != fmt.Sprint(tt.wantRead) {
				t.Errorf("allowRead = %s, want %v", got, tt.wantRead)
			}
		})
	}
}

func TestLoadExtendsErrors(t *testing.T) {
	deep := map[string]string{"work/fence.jsonc": `{"extends": "./d1.jsonc"}`}
	for i := 1; i <= 11; i++ {
		deep[fmt.Sprintf("work/d%d.jsonc", i)] = fmt.Sprintf(`{"extends": "./d%d.jsonc"}`, i+1)
	}
	deep["work/d12.jsonc"] = `{}`
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name: "cycle",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./a.jsonc"}`,
				"work/a.jsonc":     "{\n  \"extends\": \"./b.jsonc\"}",
				"work/b.jsonc":     `{"extends": "./a.jsonc"}`,
			},
			want: `R/work/b.jsonc:1:13: extends: extends cycle: file: R/work/a.jsonc -> file: R/work/b.jsonc -> file: R/work/a.jsonc`,
		},
		{
			name:  "self",
			files: map[string]string{"work/fence.jsonc": `{"extends": "./fence.jsonc"}`},
			want:  `R/work/fence.jsonc:1:13: extends: extends cycle: project config: R/work/fence.jsonc -> file: R/work/fence.jsonc`,
		},
		{
			name:  "user config extends @base",
			files: map[string]string{"home/.config/fence/fence.jsonc": `{"extends": "@base"}`},
			want:  `R/home/.config/fence/fence.jsonc:1:13: extends: extends cycle: user config: R/home/.config/fence/fence.jsonc -> @base user config: R/home/.config/fence/fence.jsonc`,
		},
		{
			name:  "too deep",
			files: deep,
			want:  `R/work/d10.jsonc:1:13: extends: extends chain is deeper than 10 steps`,
		},
		{
			name:  "unknown template",
			files: map[string]string{"work/fence.jsonc": `{"extends": "coed"}`},
			want:  `R/work/fence.jsonc:1:13: extends: unknown template "coed": want one of ci, claude-code, code, code-relaxed, code-strict, codex, default-deny, disable-telemetry, git-readonly, local-dev-server, read-only, workspace-write (a file path must contain "/" or start with ".")`,
		},
		{
			name:  "missing file",
			files: map[string]string{"work/fence.jsonc": `{"extends": "../nope.jsonc"}`},
			want:  `R/work/fence.jsonc:1:13: extends: file "R/nope.jsonc" does not exist`,
		},
		{
			name: "error in an extended file",
			files: map[string]string{
				"work/fence.jsonc": `{"extends": "./b.jsonc"}`,
				"work/b.jsonc":     `{"network": {"allowedDomains": ["*.com"]}}`,
			},
			want: `R/work/b.jsonc:1:33: network.allowedDomains[0]: "*.com" would match a whole top-level domain: name the domain, as in "*.example.com" (want a host name such as "example.com", "*.example.com", an IP address, or "*")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tree(t, tt.files)
			_, err := Load(o)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if got := strings.ReplaceAll(err.Error(), filepath.Dir(o.Dir), "R"); got != tt.want {
				t.Errorf("Load error =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

// TestLoadDepthLimit checks that exactly MaxExtendsDepth steps still load.
func TestLoadDepthLimit(t *testing.T) {
	files := map[string]string{"work/fence.jsonc": `{"extends": "./d1.jsonc"}`}
	for i := 1; i < MaxExtendsDepth; i++ {
		files[fmt.Sprintf("work/d%d.jsonc", i)] = fmt.Sprintf(`{"extends": "./d%d.jsonc"}`, i+1)
	}
	files[fmt.Sprintf("work/d%d.jsonc", MaxExtendsDepth)] = `{"allowPty": true}`
	r, err := Load(tree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Chain) != MaxExtendsDepth+1 || !r.Config.AllowPty {
		t.Errorf("chain of %d, allowPty %v; want %d and true", len(r.Chain), r.Config.AllowPty, MaxExtendsDepth+1)
	}
}

func TestLoadRecordsFilesAndOrigins(t *testing.T) {
	o := tree(t, map[string]string{
		"work/fence.jsonc": "{\"extends\": \"./b.jsonc\",\n \"filesystem\": {\"denyRead\": [\"x\", \"y\"]}}",
		"work/b.jsonc":     "{\"filesystem\": {\"denyRead\": [\"y\"]}}",
	})
	r, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(o.Dir, "fence.jsonc"), filepath.Join(o.Dir, "b.jsonc")}
	if fmt.Sprint(r.Files) != fmt.Sprint(want) {
		t.Errorf("Files = %v, want %v", r.Files, want)
	}
	for v, where := range map[string]string{"x": "project config: " + want[0] + ":2:30", "y": "file: " + want[1] + ":1:30"} {
		if o, ok := r.Origin("filesystem.denyRead", v); !ok || o.String() != where {
			t.Errorf("Origin(denyRead, %q) = %v, %v; want %s", v, o, ok, where)
		}
	}
}

func TestLoadRefusesUntrustedFiles(t *testing.T) {
	o := tree(t, map[string]string{"work/fence.jsonc": `{}`})
	p := filepath.Join(o.Dir, "fence.jsonc")
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := Load(o)
	if err == nil || !strings.Contains(err.Error(), "is writable by every user (mode 0666), so it cannot be trusted") {
		t.Fatalf("Load of a world-writable config: %v", err)
	}
	if os.Getuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err = Load(o)
	if err == nil || !strings.Contains(err.Error(), "is owned by uid 4242, neither you nor root, so it cannot be trusted") {
		t.Fatalf("Load of another user's config: %v", err)
	}
}
