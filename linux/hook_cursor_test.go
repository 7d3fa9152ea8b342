//go:build linux

package linux_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCursor is a small Cursor: it sends each call to `fence hook
// cursor` as the documented beforeShellExecution or beforeReadFile event
// and obeys the answer. A denied call does not happen; an allowed one is
// done by the agent itself, outside any sandbox, as Cursor does it (its
// hooks cannot change a command). It returns what the call printed, or
// "denied".
func fakeCursor(t *testing.T, w *world, event string, fields map[string]any) string {
	t.Helper()
	ev := map[string]any{"conversation_id": "c", "generation_id": "g", "hook_event_name": event, "workspace_roots": []string{w.ws}}
	for k, v := range fields {
		ev[k] = v
	}
	raw, err := json.Marshal(ev)
	must(t, err)
	r := w.fence(t, string(raw), nil, "hook", "cursor")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: the hook exited %d: %s", event, r.code, r.stderr)
	}
	var ans struct {
		Permission   string `json:"permission"`
		AgentMessage string `json:"agent_message"`
	}
	if r.stdout != "" {
		must(t, json.Unmarshal([]byte(r.stdout), &ans))
	}
	if ans.Permission == "deny" {
		if !strings.HasPrefix(ans.AgentMessage, "fence: ") {
			t.Errorf("%s: denied without fence's reason: %q", event, r.stdout)
		}
		return "denied"
	}
	switch event {
	case "beforeShellExecution":
		return w.runIn(t, w.ws, nil, "sh", "-c", fields["command"].(string)).stdout
	case "beforeReadFile":
		b, err := os.ReadFile(fields["file_path"].(string))
		must(t, err)
		return string(b)
	}
	t.Fatalf("the fake agent has no event %s", event)
	return ""
}

// TestHookCursorFakeAgent: a shell command the command policy refuses,
// a fence command line with its own policy flags and reads the policy
// refuses (through a link, by another case, as an attachment) never
// happen; allowed ones do, as root and as an unprivileged uid.
func TestHookCursorFakeAgent(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			must(t, os.Symlink("secret.txt", filepath.Join(w.ws, "innocent")))
			for _, c := range []struct {
				event  string
				fields map[string]any
				want   string
			}{
				{"beforeShellExecution", map[string]any{"command": "touch pushed && git push origin main", "cwd": w.ws}, "denied"},
				{"beforeShellExecution", map[string]any{"command": "touch widened; fence -t code -c true", "cwd": w.ws}, "denied"},
				{"beforeShellExecution", map[string]any{"command": "echo ran > ran.txt; cat README", "cwd": w.ws}, "readme\n"},
				{"beforeReadFile", map[string]any{"file_path": w.ws + "/secret.txt", "content": ""}, "denied"},
				{"beforeReadFile", map[string]any{"file_path": w.ws + "/innocent", "content": ""}, "denied"},
				{"beforeReadFile", map[string]any{"file_path": w.ws + "/README", "attachments": []any{map[string]any{"type": "file", "file_path": w.ws + "/secret.txt"}}}, "denied"},
				{"beforeReadFile", map[string]any{"file_path": w.ws + "/README", "content": ""}, "readme\n"},
			} {
				if got := fakeCursor(t, w, c.event, c.fields); got != c.want {
					t.Errorf("%s %v: %q, want %q", c.event, c.fields, got, c.want)
				}
			}
			for name, want := range map[string]bool{"pushed": false, "widened": false, "ran.txt": true} {
				if _, err := os.Stat(filepath.Join(w.ws, name)); (err == nil) != want {
					t.Errorf("%s exists: %v, want %v", name, err == nil, want)
				}
			}
		})
	}
}

// TestHookCursorInsideFence: a Cursor that itself runs under fence gets
// the same answers from the hook: a refused command and a refused read
// are denied, an allowed command gets no answer.
func TestHookCursorInsideFence(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			hook := filepath.Join(bin, "fence") + " -s " + w.settings + " hook cursor"
			for _, c := range []struct {
				event map[string]any
				deny  bool
			}{
				{map[string]any{"hook_event_name": "beforeShellExecution", "cwd": w.ws, "command": "git push"}, true},
				{map[string]any{"hook_event_name": "beforeReadFile", "workspace_roots": []string{w.ws}, "file_path": w.ws + "/secret.txt"}, true},
				{map[string]any{"hook_event_name": "beforeShellExecution", "cwd": w.ws, "command": "ls"}, false},
			} {
				raw, err := json.Marshal(c.event)
				must(t, err)
				r := w.fence(t, string(raw), nil, "-c", hook)
				if r.code != 0 || strings.Contains(r.stdout, `"permission":"deny"`) != c.deny || !c.deny && r.stdout != "" {
					t.Errorf("%s inside fence: exit %d, answer %q, stderr %s; want deny %v", raw, r.code, r.stdout, r.stderr, c.deny)
				}
			}
		})
	}
}
