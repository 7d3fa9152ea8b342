package cmd

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestAgentTemplateHomeDirs: on a fresh home, the claude-code and codex
// templates get their state directories made, and never a directory in
// place of a file the agent writes (~/.claude.json, history.jsonl, the
// sign-in files).
func TestAgentTemplateHomeDirs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fence creates directories only on Linux")
	}
	for name, want := range map[string]map[string]bool{
		"claude-code": {".claude/projects": true, ".claude/todos": true, ".local/state/claude": true,
			".claude.json": false, ".claude/history.jsonl": false, ".claude/.credentials.json": false, ".claude/stats-cache.json": false, ".claude/tasks": true},
		"codex": {".codex/sessions": true, ".codex/log": true,
			".codex/history.jsonl": false, ".codex/session_index.jsonl": false, ".codex/auth.json": false, ".codex/version.json": false},
	} {
		t.Run(name, func(t *testing.T) {
			// Not below /tmp, which the templates make writable as a whole.
			base, err := os.MkdirTemp("/var/tmp", "fence-agent-home-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			home, dir := base+"/home", base+"/ws"
			must(t, os.Mkdir(home, 0o755))
			must(t, os.Mkdir(dir, 0o755))
			r, err := policy.Load(policy.Options{Template: name, Dir: dir, Home: home, UserConfigDir: home + "/.config/fence"})
			if err != nil {
				t.Fatal(err)
			}
			pol := policy.Compile(r.Config, policy.Env{Dir: dir, Home: home, UserConfigDir: home + "/.config/fence"})
			judged := map[string]string{}
			for _, d := range missingHomeDirs(pol) {
				judged[strings.TrimPrefix(d.path, home+"/")] = d.skip
			}
			for p, made := range want {
				skip, ok := judged[p]
				if !ok || (skip == "") != made {
					t.Errorf("%s: judged %v, skip %q; want created %v", p, ok, skip, made)
				}
			}
			var stderr strings.Builder
			createHomeDirs(pol, false, &stderr)
			for p, made := range want {
				fi, err := os.Lstat(home + "/" + p)
				if made && (err != nil || !fi.IsDir()) {
					t.Errorf("%s was not created: %v", p, err)
				}
				if !made && err == nil {
					t.Errorf("%s was created (%v)", p, fi.Mode())
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("warnings: %s", stderr.String())
			}
		})
	}
}
