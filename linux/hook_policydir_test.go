//go:build linux

package linux_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookWrappedElsewhere: an agent may start the command its hook
// rewrote in another directory than the event's cwd (Codex's workdir, a
// shell session that has changed directory). The rewritten command still
// applies the policy of the cwd the hook judged from: the policy's
// relative rules do not move with it (the denied file next to the
// workspace stays unreadable from a subdirectory, a write outside the
// workspace is refused), and the command runs where the agent started
// it. As root and as an unprivileged uid.
func TestHookWrappedElsewhere(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			w.plant(t, map[string]string{"ws/secret.txt": "TOPSECRET\n", "ws/src/.keep": "", "outside/.keep": ""})
			must(t, os.Chown(w.outside, u.uid, u.uid))
			for _, c := range []struct{ dir, command, stdout, stderr string }{
				{w.ws + "/src", "pwd; cat ../secret.txt || echo unreadable", w.ws + "/src\nunreadable\n", "Permission denied"},
				{w.outside, "pwd; echo x > planted || echo refused", w.outside + "\nrefused\n", "Read-only file system"},
			} {
				event, err := json.Marshal(map[string]any{
					"session_id": "s", "hook_event_name": "PreToolUse", "cwd": w.ws, "tool_name": "Bash",
					"tool_input": map[string]any{"command": c.command},
				})
				must(t, err)
				r := w.fence(t, string(event), nil, "hook", "codex", "-s", w.settings)
				var ans hookAnswer
				if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.HookSpecificOutput.UpdatedInput == nil {
					t.Fatalf("hook: exit %d %q %q", r.code, r.stdout, r.stderr)
				}
				line := ans.HookSpecificOutput.UpdatedInput["command"].(string)
				if !strings.Contains(line, "--policy-dir "+w.ws) {
					t.Errorf("rewritten to %q: no --policy-dir naming the event's cwd", line)
				}
				res := w.runIn(t, c.dir, nil, "sh", "-c", line)
				if res.stdout != c.stdout || !strings.Contains(res.stderr, c.stderr) {
					t.Errorf("in %s: %q printed %q, stderr %q; want %q and %q", c.dir, line, res.stdout, res.stderr, c.stdout, c.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(w.outside, "planted")); err == nil {
				t.Error("the command wrote outside the workspace of the cwd the hook judged from")
			}
		})
	}
}
