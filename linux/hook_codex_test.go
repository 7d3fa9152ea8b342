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

// fakeCodex is a small Codex: it sends each tool call to `fence hook
// codex` as Codex's PreToolUse event and obeys the answer, as Codex's
// hooks documentation says Codex does. A denied call does not happen; a
// Bash call runs the command the hook gave back (a string through sh, a
// word list as it is); an allowed apply_patch is applied by the agent
// itself, outside any sandbox, as Codex applies it. It returns what the
// call printed, or "denied".
func fakeCodex(t *testing.T, w *world, tool string, input map[string]any) string {
	t.Helper()
	event, err := json.Marshal(map[string]any{
		"session_id": "s", "transcript_path": nil, "cwd": w.ws, "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
		"permission_mode": "default", "turn_id": "t", "tool_use_id": "c", "tool_name": tool, "tool_input": input,
	})
	must(t, err)
	r := w.fence(t, string(event), nil, "hook", "codex")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: the hook exited %d: %s", tool, r.code, r.stderr)
	}
	var ans hookAnswer
	if r.stdout != "" {
		must(t, json.Unmarshal([]byte(r.stdout), &ans))
	}
	out := ans.HookSpecificOutput
	switch {
	case out.PermissionDecision == "deny":
		if !strings.HasPrefix(out.PermissionDecisionReason, "fence: ") {
			t.Errorf("%s: denied without fence's reason: %q", tool, r.stdout)
		}
		return "denied"
	case out.PermissionDecision == "allow" && out.UpdatedInput == nil, out.PermissionDecision != "" && out.PermissionDecision != "allow":
		t.Fatalf("%s: an answer Codex refuses: %s", tool, r.stdout)
	case out.UpdatedInput != nil:
		input = out.UpdatedInput
	}
	switch tool {
	case "Bash":
		return codexRunShell(t, w, input)
	case "apply_patch":
		codexApply(t, w.ws, w.home, input["command"].(string))
		return "applied"
	}
	t.Fatalf("the fake agent has no tool %s", tool)
	return ""
}

// codexRunShell runs a Bash call's command as Codex would: a string
// through the shell, a word list directly. A command the hook rewrote
// must be a run of this fence.
func codexRunShell(t *testing.T, w *world, input map[string]any) string {
	t.Helper()
	switch c := input["command"].(type) {
	case string:
		return w.runIn(t, w.ws, nil, "sh", "-c", c).stdout
	case []any:
		argv := make([]string, len(c))
		for i, a := range c {
			argv[i] = a.(string)
		}
		return w.runIn(t, w.ws, nil, argv...).stdout
	}
	t.Fatalf("a Bash call without a command: %v", input)
	return ""
}

// codexApply applies the part of the patch format these tests use: added
// files, deleted files and moves. A path is taken as Codex takes it:
// "~/" is the home directory, a relative one is from dir.
func codexApply(t *testing.T, dir, home, patch string) {
	t.Helper()
	lines := strings.Split(patch, "\n")
	abs := func(p string) string {
		switch {
		case filepath.IsAbs(p):
			return p
		case strings.HasPrefix(p, "~/"):
			return filepath.Join(home, strings.TrimLeft(p[2:], "/"))
		}
		return filepath.Join(dir, p)
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			var content strings.Builder
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+") {
				i++
				content.WriteString(lines[i][1:] + "\n")
			}
			must(t, os.WriteFile(abs(l[len("*** Add File: "):]), []byte(content.String()), 0o644))
		case strings.HasPrefix(l, "*** Delete File: "):
			must(t, os.Remove(abs(l[len("*** Delete File: "):])))
		case strings.HasPrefix(l, "*** Update File: ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "*** Move to: "):
			must(t, os.Rename(abs(l[len("*** Update File: "):]), abs(lines[i+1][len("*** Move to: "):])))
			i++
		}
	}
}

// TestHookCodexFakeAgent: shell calls the policy allows, given as a
// string or a word list, run inside fence (they cannot read what the
// policy denies, and what they may write they write); ones the command
// policy refuses, a fence command line with its own policy flags, and
// patches (given to apply_patch or to the shell's apply_patch) that
// write, delete or move where the policy refuses never happen; allowed
// patches do; as root and as an unprivileged uid.
func TestHookCodexFakeAgent(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			for _, c := range []struct {
				command any
				ran     string
			}{
				{"cat secret.txt 2>/dev/null; echo string > ran.txt; cat README", "ran.txt"},
				{[]string{"sh", "-c", "cat secret.txt 2>/dev/null; echo list > argv.txt; cat README"}, "argv.txt"},
			} {
				got := fakeCodex(t, w, "Bash", map[string]any{"command": c.command})
				if strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "readme") {
					t.Errorf("the Bash call %q printed %q: it read the denied file or did not run", c.command, got)
				}
				if _, err := os.Stat(filepath.Join(w.ws, c.ran)); err != nil {
					t.Errorf("the Bash call %q did not write %s: %v", c.command, c.ran, err)
				}
			}
			for _, c := range []struct {
				tool  string
				input map[string]any
				want  string
			}{
				{"Bash", map[string]any{"command": "touch pushed && git push origin main"}, "denied"},
				{"Bash", map[string]any{"command": []string{"git", "push", "origin"}}, "denied"},
				{"Bash", map[string]any{"command": []string{"fence", "-t", "code", "--", "touch", "widened"}}, "denied"},
				{"Bash", map[string]any{"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: " + w.outside + "/heredoc.txt\n+evil\n*** End Patch\nEOF"}, "denied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: new.txt\n+new\n*** End Patch\n"}, "applied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: new2.txt\n+x\n*** Add File: " + w.outside + "/data.txt\n+evil\n*** End Patch"}, "denied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: README\n*** Move to: " + w.outside + "/moved\n@@\n readme\n*** End Patch"}, "denied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Delete File: .bashrc\n*** End Patch"}, "denied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: new3.txt\n+x\n"}, "denied"},
				// Codex takes "~/" in a patch for the home directory.
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: ~/.bashrc\n+evil\n*** End Patch"}, "denied"},
				{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: ~/notes.txt\n+evil\n*** End Patch"}, "denied"},
			} {
				if got := fakeCodex(t, w, c.tool, c.input); got != c.want {
					t.Errorf("%s %v: %q, want %q", c.tool, c.input["command"], got, c.want)
				}
			}
			for name, want := range map[string]string{"ws/pushed": "", "ws/widened": "", "ws/new.txt": "new\n", "ws/new2.txt": "", "ws/new3.txt": "",
				"outside/data.txt": "OUTSIDE\n", "outside/moved": "", "outside/heredoc.txt": "", "ws/README": "readme\n", "ws/.bashrc": "# ws rc\n", "home/.bashrc": "# rc\n", "home/notes.txt": ""} {
				b, err := os.ReadFile(filepath.Join(w.base, name))
				if want == "" && err == nil || want != "" && string(b) != want {
					t.Errorf("%s = %q, %v; want %s", name, b, err, fmt.Sprintf("%q", want))
				}
			}
		})
	}
}

// TestHookCodexInsideFence: a Codex that itself runs under fence gets the
// same answers from the hook, and the command the hook gives back runs as
// a fence nested in the agent's (it still cannot read the denied file).
func TestHookCodexInsideFence(t *testing.T) {
	policy := `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			fence := filepath.Join(bin, "fence")
			hook := fmt.Sprintf("%s -s %s hook codex", fence, w.settings)
			event := func(tool, command string) string {
				b, err := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": w.ws, "tool_name": tool, "tool_input": map[string]any{"command": command}})
				must(t, err)
				return string(b)
			}
			for _, ev := range []string{event("Bash", "git push"), event("apply_patch", "*** Begin Patch\n*** Delete File: .bashrc\n*** End Patch")} {
				if r := w.fence(t, ev, nil, "-c", hook); r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
					t.Errorf("%s inside fence: exit %d, %q, %s; want a denial", ev, r.code, r.stdout, r.stderr)
				}
			}
			r := w.fence(t, event("Bash", "cat secret.txt; cat README"), nil, "-c", hook)
			var ans hookAnswer
			if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
				t.Fatalf("the hook inside fence: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			command, _ := ans.HookSpecificOutput.UpdatedInput["command"].(string)
			if ans.HookSpecificOutput.PermissionDecision != "allow" || !strings.HasPrefix(command, fence+" ") {
				t.Fatalf("the hook inside fence answered %s", r.stdout)
			}
			run := w.fence(t, "", nil, "-c", command)
			if strings.Contains(run.stdout, "TOPSECRET") || !strings.Contains(run.stdout, "readme") || !strings.Contains(run.stderr, "inside a fence sandbox") {
				t.Errorf("the rewritten command inside fence: exit %d, stdout %q, stderr %q", run.code, run.stdout, run.stderr)
			}
		})
	}
}
