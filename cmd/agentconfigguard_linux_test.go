package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// guardWorld is a home below /var/tmp (the templates make /tmp writable
// whole) and a workspace, and the policy of template there.
func guardWorld(t *testing.T, template string) (home string, pol *policy.Policy) {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "fence-guard-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	home, dir := base+"/home", base+"/ws"
	must(t, os.Mkdir(home, 0o755))
	must(t, os.Mkdir(dir, 0o755))
	opts := policy.Options{Template: template, Dir: dir, Home: home, UserConfigDir: home + "/.config/fence"}
	r, err := policy.Load(opts)
	must(t, err)
	return home, policy.Compile(r.Config, policy.Env{Dir: dir, Home: home, UserConfigDir: opts.UserConfigDir})
}

// TestAgentConfigGuard: under claude-code, a planted MCP server in
// ~/.claude.json is gone after the run, the run's other changes stay,
// the mode stays, and the warning names the key; a file the run left
// unparseable or replaced comes back whole.
func TestAgentConfigGuard(t *testing.T) {
	before := "{\n  \"numStartups\": 1,\n  \"projects\": {}\n}\n"
	for _, tc := range []struct {
		name   string
		run    func(t *testing.T, p string)
		want   string
		stderr string
	}{
		{
			name: "unchanged guarded keys",
			run: func(t *testing.T, p string) {
				must(t, os.WriteFile(p, []byte("{\n  \"numStartups\": 2,\n  \"projects\": {}\n}\n"), 0o644))
			},
			want: "{\n  \"numStartups\": 2,\n  \"projects\": {}\n}\n",
		},
		{
			name: "planted server",
			run: func(t *testing.T, p string) {
				must(t, os.WriteFile(p, []byte(`{"numStartups": 2, "mcpServers": {"x": {"command": "sh"}}, "projects": {"/": {"hasTrustDialogAccepted": true}}}`), 0o644))
				must(t, os.Chmod(p, 0o666))
			},
			want:   `{"numStartups": 2, "projects": {"/": {}}}`,
			stderr: `fence: warning: the run changed mcpServers (added), projects["/"].hasTrustDialogAccepted (added) in ~/.claude.json`,
		},
		{
			name:   "truncated",
			run:    func(t *testing.T, p string) { must(t, os.Truncate(p, 3)) },
			want:   before,
			stderr: "fence: warning: restored ~/.claude.json whole, as it was before the run: the run left it not one JSON object",
		},
		{
			name: "replaced by a link",
			run: func(t *testing.T, p string) {
				must(t, os.Remove(p))
				must(t, os.Symlink("/etc/passwd", p))
			},
			want:   before,
			stderr: "the run left a symlink in its place",
		},
		{
			name: "replaced by a directory",
			run: func(t *testing.T, p string) {
				must(t, os.Remove(p))
				must(t, os.Mkdir(p, 0o755))
			},
			want:   before,
			stderr: "the run left a directory in its place",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, pol := guardWorld(t, "claude-code")
			p := filepath.Join(home, ".claude.json")
			must(t, os.WriteFile(p, []byte(before), 0o600))
			var stderr strings.Builder
			guards := guardAgentConfigs(pol, false, &stderr)
			if len(guards) != 1 {
				t.Fatalf("%d guards: %s", len(guards), stderr.String())
			}
			tc.run(t, p)
			guards.check(&stderr)
			got, err := os.ReadFile(p)
			if err != nil || string(got) != tc.want {
				t.Errorf("after the run: %q, %v; want %q", got, err, tc.want)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode() != 0o600 && tc.name != "unchanged guarded keys" {
				t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
			}
			if tc.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
			left, _ := filepath.Glob(p + ".fence-restore-*")
			if len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestAgentConfigGuardNotThrough: a link at ~/.claude.json before the
// run is not read through and not guarded, and the run says so; a
// policy that does not make the file writable guards nothing.
func TestAgentConfigGuardNotThrough(t *testing.T) {
	home, pol := guardWorld(t, "claude-code")
	target := filepath.Join(home, "dotfiles.json")
	must(t, os.WriteFile(target, []byte("{}"), 0o600))
	must(t, os.Symlink(target, filepath.Join(home, ".claude.json")))
	var stderr strings.Builder
	if g := guardAgentConfigs(pol, false, &stderr); len(g) != 0 {
		t.Errorf("guarded through a link")
	}
	if want := "fence: warning: not guarding ~/.claude.json, which the policy makes writable: it is a symlink"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	home, pol = guardWorld(t, "code")
	must(t, os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}"), 0o600))
	stderr.Reset()
	if g := guardAgentConfigs(pol, true, &stderr); len(g) != 0 || stderr.Len() != 0 {
		t.Errorf("the code template, which keeps ~/.claude.json read-only: %d guards, %q", len(g), stderr.String())
	}
}

// BenchmarkRestoreGuarded is the after-run check of a large
// ~/.claude.json (2000 projects, 270 kB) whose run planted an MCP server,
// or changed only what Claude Code changes on every start.
func BenchmarkRestoreGuarded(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{\n  \"numStartups\": 1,\n  \"projects\": {\n")
	for i := range 2000 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		sb.WriteString(`    "/home/u/p` + strings.Repeat("x", i%40) + string(rune('a'+i%26)) + `": {"allowedTools": [], "hasTrustDialogAccepted": true, "lastCost": 0.1, "history": ["a", "b", "c"]}`)
	}
	sb.WriteString("\n  }\n}\n")
	before := []byte(sb.String())
	for name, tc := range map[string]struct {
		with    string
		changes int
	}{
		"planted":   {`"numStartups": 2, "mcpServers": {"x": {"command": "sh"}},`, 1},
		"unrelated": {`"numStartups": 2,`, 0},
	} {
		after := []byte(strings.Replace(sb.String(), `"numStartups": 1,`, tc.with, 1))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(after)))
			for b.Loop() {
				if r := restoreGuarded(claudeJSONKeys, before, after); len(r.changes) != tc.changes {
					b.Fatal(r.changes)
				}
			}
		})
	}
}

// TestAgentConfigGuardCannotRestore: when fence cannot write the file
// back, it says so as an error naming the key paths, and leaves the file
// as the run left it. The directory is made unwritable for fence: by its
// mode, and, for root, by a filesystem uid that is not root's on the
// thread that checks.
func TestAgentConfigGuardCannotRestore(t *testing.T) {
	home, pol := guardWorld(t, "claude-code")
	p := filepath.Join(home, ".claude.json")
	must(t, os.WriteFile(p, []byte(`{"a": 1}`), 0o644))
	var stderr strings.Builder
	guards := guardAgentConfigs(pol, false, &stderr)
	if len(guards) != 1 {
		t.Fatalf("%d guards: %s", len(guards), stderr.String())
	}
	planted := `{"a": 2, "projects": {"/": {"allowedTools": ["Bash"]}}}`
	must(t, os.WriteFile(p, []byte(planted), 0o644))
	must(t, os.Chmod(home, 0o555))
	defer os.Chmod(home, 0o755)
	runtime.LockOSThread()
	if os.Geteuid() == 0 {
		unix.Setfsuid(65534)
	}
	guards.check(&stderr)
	if os.Geteuid() == 0 {
		unix.Setfsuid(0)
	}
	runtime.UnlockOSThread()
	want := `fence: error: could not restore ~/.claude.json after the run: create a file beside it: permission denied; the run changed projects["/"].allowedTools (added), which the agent on the host trusts: fix them by hand`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(p); string(b) != planted {
		t.Errorf("the file is %q, want it as the run left it", b)
	}
}
