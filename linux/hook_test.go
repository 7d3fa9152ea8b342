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

// hookAnswer is what a Claude Code PreToolUse hook answers.
type hookAnswer struct {
	HookSpecificOutput struct {
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// fakeClaude is a small Claude Code: it sends each tool call to `fence
// hook claude` as a PreToolUse event and obeys the answer. A denied call
// does not happen; a Bash call runs the command the hook gave back; an
// allowed file call is done by the agent itself, outside any sandbox, as
// Claude Code does it. It returns what each call printed, or "denied".
func fakeClaude(t *testing.T, w *world, tool string, input map[string]any) string {
	t.Helper()
	event, err := json.Marshal(map[string]any{
		"session_id": "s", "hook_event_name": "PreToolUse", "cwd": w.ws, "tool_name": tool, "tool_input": input,
	})
	must(t, err)
	r := w.fence(t, string(event), nil, "hook", "claude")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: the hook exited %d: %s", tool, r.code, r.stderr)
	}
	var ans hookAnswer
	if r.stdout != "" {
		must(t, json.Unmarshal([]byte(r.stdout), &ans))
	}
	out := ans.HookSpecificOutput
	if out.PermissionDecision == "deny" {
		return "denied"
	}
	if out.UpdatedInput != nil {
		input = out.UpdatedInput
		if c, _ := input["command"].(string); !strings.HasPrefix(c, filepath.Join(bin, "fence")+" ") {
			t.Errorf("%s: the hook rewrote the command to %q, not a run of this fence", tool, c)
		}
	}
	switch tool {
	case "Bash":
		res := w.runIn(t, w.ws, nil, "sh", "-c", input["command"].(string))
		return res.stdout
	case "Read":
		b, err := os.ReadFile(claudePath(w, input["file_path"].(string)))
		must(t, err)
		return string(b)
	case "Write":
		must(t, os.WriteFile(claudePath(w, input["file_path"].(string)), []byte(input["content"].(string)), 0o644))
		return "written"
	case "Grep":
		root, _ := input["path"].(string)
		return grepTree(t, claudePath(w, root), input["pattern"].(string))
	}
	t.Fatalf("the fake agent has no tool %s", tool)
	return ""
}

// claudePath is the path Claude Code's file tools open for p: trimmed,
// "~" and "~/" taken as the home directory, relative to the cwd.
func claudePath(w *world, p string) string {
	p = strings.TrimSpace(p)
	switch {
	case p == "~":
		return w.home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(w.home, p[2:])
	case filepath.IsAbs(p):
		return p
	}
	return filepath.Join(w.ws, p)
}

// grepTree is what a content search below root prints: the lines of
// every regular file there that hold pattern (root may be a file).
func grepTree(t *testing.T, root, pattern string) string {
	var out strings.Builder
	must(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if strings.Contains(l, pattern) {
				out.WriteString(l)
			}
		}
		return nil
	}))
	return out.String()
}

// TestHookClaudeFakeAgent: a Bash call the policy allows runs inside
// fence (it cannot read what the policy denies, and what it may write
// it writes), one the command policy refuses and file calls the policy
// refuses never happen, and allowed file calls do, as root and as an
// unprivileged uid.
func TestHookClaudeFakeAgent(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt", "~/.ssh"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			got := fakeClaude(t, w, "Bash", map[string]any{"command": "cat secret.txt 2>/dev/null; echo inside > ran.txt; cat README", "description": "d"})
			if strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "readme") {
				t.Errorf("the Bash call printed %q: it read the denied file or did not run", got)
			}
			if b, err := os.ReadFile(filepath.Join(w.ws, "ran.txt")); err != nil || string(b) != "inside\n" {
				t.Errorf("ran.txt = %q, %v: the Bash call did not write", b, err)
			}
			if got := fakeClaude(t, w, "Bash", map[string]any{"command": "touch pushed && git push origin main"}); got != "denied" {
				t.Errorf("git push: %q, want denied", got)
			}
			for _, c := range []struct {
				tool  string
				input map[string]any
				want  string
			}{
				{"Read", map[string]any{"file_path": w.ws + "/secret.txt"}, "denied"},
				{"Read", map[string]any{"file_path": w.ws + "/README"}, "readme\n"},
				{"Write", map[string]any{"file_path": w.ws + "/.bashrc", "content": "evil\n"}, "denied"},
				{"Write", map[string]any{"file_path": w.outside + "/data.txt", "content": "evil\n"}, "denied"},
				{"Write", map[string]any{"file_path": w.ws + "/new.txt", "content": "new\n"}, "written"},
				// Claude Code trims a path and takes "~/" for the home directory.
				{"Read", map[string]any{"file_path": "~/.ssh/id_rsa"}, "denied"},
				{"Read", map[string]any{"file_path": " " + w.ws + "/secret.txt"}, "denied"},
				{"Write", map[string]any{"file_path": "~/.bashrc", "content": "evil\n"}, "denied"},
				// A content search reads every file below its path.
				{"Grep", map[string]any{"pattern": "TOPSECRET", "output_mode": "content"}, "denied"},
				{"Grep", map[string]any{"pattern": "readme", "path": "README"}, "readme\n"},
			} {
				if got := fakeClaude(t, w, c.tool, c.input); got != c.want {
					t.Errorf("%s %v: %q, want %q", c.tool, c.input, got, c.want)
				}
			}
			for name, want := range map[string]string{"ws/pushed": "", "ws/.bashrc": "# ws rc\n", "outside/data.txt": "OUTSIDE\n", "ws/new.txt": "new\n", "home/.bashrc": "# rc\n"} {
				b, err := os.ReadFile(filepath.Join(w.base, name))
				if want == "" && err == nil || want != "" && string(b) != want {
					t.Errorf("%s = %q, %v; want %s", name, b, err, fmt.Sprintf("%q", want))
				}
			}
		})
	}
}

// TestHookClaudeInsideFence: an agent that itself runs under fence gets
// the same answers from the hook, and the command the hook gives back
// runs as a fence nested in the agent's (it still cannot read the denied
// file), not unsandboxed and not refused.
func TestHookClaudeInsideFence(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt", "~/.ssh"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			fence := filepath.Join(bin, "fence")
			event := func(command string) string {
				b, err := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": w.ws, "tool_name": "Bash", "tool_input": map[string]any{"command": command}})
				must(t, err)
				return string(b)
			}
			hook := fmt.Sprintf("%s -s %s hook claude", fence, w.settings)
			denied := w.fence(t, event("git push"), nil, "-c", hook)
			if denied.code != 0 || !strings.Contains(denied.stdout, `"permissionDecision":"deny"`) {
				t.Fatalf("git push inside fence: exit %d, %q, %s", denied.code, denied.stdout, denied.stderr)
			}
			r := w.fence(t, event("cat secret.txt; cat README"), nil, "-c", hook)
			var ans hookAnswer
			if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
				t.Fatalf("the hook inside fence: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			command, _ := ans.HookSpecificOutput.UpdatedInput["command"].(string)
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
