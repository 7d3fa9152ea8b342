//go:build linux

package linux_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copilotAnswer is what a Copilot preToolUse hook answers.
type copilotAnswer struct {
	PermissionDecision       string         `json:"permissionDecision"`
	PermissionDecisionReason string         `json:"permissionDecisionReason"`
	ModifiedArgs             map[string]any `json:"modifiedArgs"`
}

// fakeCopilot is a small GitHub Copilot CLI: it sends each tool call to
// `fence hook copilot` as the documented camelCase preToolUse event, its
// toolArgs a JSON string (as the CLI's command hooks get them) or, with
// asObject, an object, and obeys the answer. A denied call does not
// happen; a bash call runs the command of modifiedArgs when there is
// one; an allowed file call is done by the agent itself, outside any
// sandbox. It returns what each call printed, or "denied".
func fakeCopilot(t *testing.T, w *world, tool string, args map[string]any, asObject bool) string {
	t.Helper()
	r := w.fence(t, copilotEvent(t, w, tool, args, asObject), nil, "hook", "copilot")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: the hook exited %d: %s", tool, r.code, r.stderr)
	}
	var ans copilotAnswer
	if r.stdout != "" {
		must(t, json.Unmarshal([]byte(r.stdout), &ans))
	}
	if ans.PermissionDecision == "deny" {
		if !strings.HasPrefix(ans.PermissionDecisionReason, "fence: ") {
			t.Errorf("%s: denied without fence's reason: %q", tool, r.stdout)
		}
		return "denied"
	}
	if ans.ModifiedArgs != nil {
		args = ans.ModifiedArgs
		if c, _ := args["command"].(string); tool != "bash" || !strings.HasPrefix(c, filepath.Join(bin, "fence")+" ") {
			t.Errorf("%s: the hook rewrote the call to %v, not a run of this fence", tool, args)
		}
	}
	path, _ := args["path"].(string)
	switch tool {
	case "bash":
		return w.runIn(t, w.ws, nil, "sh", "-c", args["command"].(string)).stdout
	case "view":
		b, err := os.ReadFile(path)
		must(t, err)
		return string(b)
	case "create":
		must(t, os.WriteFile(path, []byte(args["file_text"].(string)), 0o644))
		return "written"
	case "edit":
		b, err := os.ReadFile(path)
		must(t, err)
		must(t, os.WriteFile(path, []byte(strings.Replace(string(b), args["old_str"].(string), args["new_str"].(string), 1)), 0o644))
		return "edited"
	}
	t.Fatalf("the fake agent has no tool %s", tool)
	return ""
}

// copilotEvent is the preToolUse event of a call.
func copilotEvent(t *testing.T, w *world, tool string, args map[string]any, asObject bool) string {
	t.Helper()
	raw, err := json.Marshal(args)
	must(t, err)
	var toolArgs any = string(raw)
	if asObject {
		toolArgs = json.RawMessage(raw)
	}
	event, err := json.Marshal(map[string]any{"sessionId": "s", "timestamp": 1704614600000, "cwd": w.ws, "toolName": tool, "toolArgs": toolArgs})
	must(t, err)
	return string(event)
}

// TestHookCopilotFakeAgent: a bash call the policy allows runs inside
// fence (it cannot read what the policy denies, and what it may write
// it writes), one the command policy refuses and file calls the policy
// refuses never happen, and allowed file calls do, toolArgs sent either
// way, as root and as an unprivileged uid.
func TestHookCopilotFakeAgent(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			must(t, os.Symlink("secret.txt", filepath.Join(w.ws, "innocent")))
			for _, asObject := range []bool{false, true} {
				got := fakeCopilot(t, w, "bash", map[string]any{"command": "cat secret.txt 2>/dev/null; echo inside >> ran.txt; cat README", "description": "d"}, asObject)
				if strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "readme") {
					t.Errorf("the bash call printed %q: it read the denied file or did not run", got)
				}
				for _, c := range []struct {
					tool string
					args map[string]any
					want string
				}{
					{"bash", map[string]any{"command": "touch pushed && git push origin main"}, "denied"},
					{"bash", map[string]any{"command": "touch widened; fence -t code -c true"}, "denied"},
					{"view", map[string]any{"path": w.ws + "/secret.txt"}, "denied"},
					{"view", map[string]any{"path": w.ws + "/innocent"}, "denied"},
					{"view", map[string]any{"path": w.ws + "/README"}, "readme\n"},
					{"create", map[string]any{"path": w.outside + "/data.txt", "file_text": "evil\n"}, "denied"},
					{"edit", map[string]any{"path": w.ws + "/.bashrc", "old_str": "# ws rc", "new_str": "evil"}, "denied"},
					{"create", map[string]any{"path": w.ws + "/new.txt", "file_text": "new\n"}, "written"},
				} {
					if got := fakeCopilot(t, w, c.tool, c.args, asObject); got != c.want {
						t.Errorf("%s %v (toolArgs an object: %v): %q, want %q", c.tool, c.args, asObject, got, c.want)
					}
				}
			}
			for name, want := range map[string]string{"ws/pushed": "", "ws/widened": "", "ws/ran.txt": "inside\ninside\n", "ws/.bashrc": "# ws rc\n", "outside/data.txt": "OUTSIDE\n", "ws/new.txt": "new\n"} {
				b, err := os.ReadFile(filepath.Join(w.base, name))
				if want == "" && err == nil || want != "" && string(b) != want {
					t.Errorf("%s = %q, %v; want %s", name, b, err, fmt.Sprintf("%q", want))
				}
			}
		})
	}
}

// TestHookCopilotInsideFence: a Copilot that itself runs under fence
// gets the same answers from the hook, and the command the hook gives
// back runs as a fence nested in the agent's (it still cannot read the
// denied file), not unsandboxed and not refused.
func TestHookCopilotInsideFence(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			fence := filepath.Join(bin, "fence")
			hook := fmt.Sprintf("%s -s %s hook copilot", fence, w.settings)
			denied := w.fence(t, copilotEvent(t, w, "bash", map[string]any{"command": "git push"}, false), nil, "-c", hook)
			if denied.code != 0 || !strings.Contains(denied.stdout, `"permissionDecision":"deny"`) {
				t.Fatalf("git push inside fence: exit %d, %q, %s", denied.code, denied.stdout, denied.stderr)
			}
			read := w.fence(t, copilotEvent(t, w, "view", map[string]any{"path": w.ws + "/secret.txt"}, false), nil, "-c", hook)
			if read.code != 0 || !strings.Contains(read.stdout, `"permissionDecision":"deny"`) {
				t.Fatalf("view secret.txt inside fence: exit %d, %q, %s", read.code, read.stdout, read.stderr)
			}
			r := w.fence(t, copilotEvent(t, w, "bash", map[string]any{"command": "cat secret.txt; cat README"}, false), nil, "-c", hook)
			var ans copilotAnswer
			if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
				t.Fatalf("the hook inside fence: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			command, _ := ans.ModifiedArgs["command"].(string)
			if !strings.HasPrefix(command, fence+" ") {
				t.Fatalf("the hook inside fence rewrote the call to %q", command)
			}
			run := w.fence(t, "", nil, "-c", command)
			if strings.Contains(run.stdout, "TOPSECRET") || !strings.Contains(run.stdout, "readme") || !strings.Contains(run.stderr, "inside a fence sandbox") {
				t.Errorf("the rewritten command inside fence: exit %d, stdout %q, stderr %q", run.code, run.stdout, run.stderr)
			}
		})
	}
}
