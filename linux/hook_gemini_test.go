//go:build linux

package linux_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geminiAnswer is what a Gemini CLI BeforeTool hook answers.
type geminiAnswer struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput struct {
		HookEventName string         `json:"hookEventName"`
		ToolInput     map[string]any `json:"tool_input"`
	} `json:"hookSpecificOutput"`
}

// fakeGemini is a small Gemini CLI: it sends each tool call to `fence
// hook gemini` as the documented BeforeTool event and obeys the answer.
// A denied call does not happen; hookSpecificOutput.tool_input is merged
// into the call's arguments, as Gemini merges it; run_shell_command runs
// the command so given in its dir_path; an allowed file call is done by
// the agent itself, outside any sandbox, as Gemini does it; an allowed
// fetch is reported, not made. It returns what the call printed, or
// "denied".
func fakeGemini(t *testing.T, w *world, tool string, input map[string]any) string {
	t.Helper()
	event, err := json.Marshal(map[string]any{
		"session_id": "s", "transcript_path": w.base + "/t.json", "cwd": w.ws, "hook_event_name": "BeforeTool",
		"timestamp": "2026-01-05T10:00:00Z", "tool_name": tool, "tool_input": input,
	})
	must(t, err)
	r := w.fence(t, string(event), nil, "hook", "gemini")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: the hook exited %d: %s", tool, r.code, r.stderr)
	}
	var ans geminiAnswer
	if r.stdout != "" {
		must(t, json.Unmarshal([]byte(r.stdout), &ans))
	}
	if ans.Decision == "deny" || ans.Decision == "block" {
		if !strings.HasPrefix(ans.Reason, "fence: ") {
			t.Errorf("%s: denied without fence's reason: %q", tool, r.stdout)
		}
		return "denied"
	}
	if ans.HookSpecificOutput.ToolInput != nil {
		input = maps.Clone(input)
		maps.Copy(input, ans.HookSpecificOutput.ToolInput)
		if c, _ := input["command"].(string); !strings.HasPrefix(strings.TrimPrefix(c, "cd '"+w.ws+"' || exit 1\n"), filepath.Join(bin, "fence")+" ") {
			t.Errorf("%s: the hook rewrote the command to %q, not a run of this fence", tool, c)
		}
	}
	return geminiDo(t, w, tool, input)
}

// geminiDo does an allowed call as Gemini CLI's tool would.
func geminiDo(t *testing.T, w *world, tool string, input map[string]any) string {
	t.Helper()
	path, _ := input["file_path"].(string)
	switch tool {
	case "run_shell_command":
		dir := w.ws
		if d, ok := input["dir_path"].(string); ok {
			dir = filepath.Join(w.ws, d)
		}
		return w.runIn(t, dir, nil, "sh", "-c", input["command"].(string)).stdout
	case "read_file":
		b, err := os.ReadFile(path)
		must(t, err)
		return string(b)
	case "write_file":
		must(t, os.WriteFile(path, []byte(input["content"].(string)), 0o644))
		return "written"
	case "replace":
		b, err := os.ReadFile(path)
		must(t, err)
		must(t, os.WriteFile(path, []byte(strings.Replace(string(b), input["old_string"].(string), input["new_string"].(string), 1)), 0o644))
		return "replaced"
	case "read_many_files":
		return "read"
	case "web_fetch":
		return "fetched"
	}
	t.Fatalf("the fake agent has no tool %s", tool)
	return ""
}

// geminiPolicy is the policy of the Gemini end-to-end tests.
const geminiPolicy = `{"filesystem": {"allowWrite": ["."], "denyRead": ["secret.txt"]}, "command": {"deny": ["git push"]}, "network": {"allowedDomains": ["example.com"]}}`

// TestHookGeminiFakeAgent: a shell call the policy allows runs inside
// fence, in its dir_path (it cannot read what the policy denies, and
// what it may write it writes); one the command policy refuses, a fence
// command line with its own policy flags, and file and fetch calls the
// policy refuses never happen; allowed ones do, as root and as an
// unprivileged uid.
func TestHookGeminiFakeAgent(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, geminiPolicy)
			got := fakeGemini(t, w, "run_shell_command", map[string]any{"command": "cat secret.txt 2>/dev/null; echo inside > ran.txt; cat README", "description": "d"})
			if strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "readme") {
				t.Errorf("the shell call printed %q: it read the denied file or did not run", got)
			}
			if b, err := os.ReadFile(filepath.Join(w.ws, "ran.txt")); err != nil || string(b) != "inside\n" {
				t.Errorf("ran.txt = %q, %v: the shell call did not write", b, err)
			}
			got = fakeGemini(t, w, "run_shell_command", map[string]any{"command": "pwd; cat ../secret.txt 2>/dev/null", "dir_path": "sub"})
			if got != w.ws+"/sub\n" {
				t.Errorf("the shell call in sub printed %q, want only its directory", got)
			}
			for _, c := range []struct {
				tool  string
				input map[string]any
				want  string
			}{
				{"run_shell_command", map[string]any{"command": "touch pushed && git push origin main"}, "denied"},
				{"run_shell_command", map[string]any{"command": "touch widened; fence -t code -c true"}, "denied"},
				{"read_file", map[string]any{"file_path": w.ws + "/secret.txt"}, "denied"},
				{"read_file", map[string]any{"absolute_path": w.ws + "/secret.txt"}, "denied"},
				{"read_file", map[string]any{"file_path": w.ws + "/README"}, "readme\n"},
				{"read_many_files", map[string]any{"include": []string{"README", "secret.txt"}}, "denied"},
				{"read_many_files", map[string]any{"include": []string{"README", "sub/*"}}, "read"},
				// A glob from the cwd reads the denied file below it.
				{"read_many_files", map[string]any{"include": []string{"*.txt"}}, "denied"},
				{"write_file", map[string]any{"file_path": w.ws + "/.bashrc", "content": "evil\n"}, "denied"},
				{"write_file", map[string]any{"file_path": w.outside + "/data.txt", "content": "evil\n"}, "denied"},
				{"replace", map[string]any{"file_path": w.outside + "/data.txt", "old_string": "OUTSIDE", "new_string": "evil"}, "denied"},
				{"write_file", map[string]any{"file_path": w.ws + "/new.txt", "content": "new\n"}, "written"},
				{"web_fetch", map[string]any{"prompt": "Summarize https://example.com/a and https://evil.test/b"}, "denied"},
				{"web_fetch", map[string]any{"prompt": "Summarize https://example.com/a"}, "fetched"},
				// Gemini splits its prompt at U+00A0 too: it fetches evil.test.
				{"web_fetch", map[string]any{"prompt": "Summarize https://evil.test\u00a0@example.com/"}, "denied"},
			} {
				if got := fakeGemini(t, w, c.tool, c.input); got != c.want {
					t.Errorf("%s %v: %q, want %q", c.tool, c.input, got, c.want)
				}
			}
			for name, want := range map[string]string{"ws/pushed": "", "ws/widened": "", "ws/.bashrc": "# ws rc\n", "outside/data.txt": "OUTSIDE\n", "ws/new.txt": "new\n"} {
				b, err := os.ReadFile(filepath.Join(w.base, name))
				if want == "" && err == nil || want != "" && string(b) != want {
					t.Errorf("%s = %q, %v; want %s", name, b, err, fmt.Sprintf("%q", want))
				}
			}
		})
	}
}

// TestHookGeminiInsideFence: a Gemini CLI that itself runs under fence
// gets the same answers from the hook, and the command the hook gives
// back runs as a fence nested in the agent's (it still cannot read the
// denied file), not unsandboxed and not refused.
func TestHookGeminiInsideFence(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, geminiPolicy)
			fence := filepath.Join(bin, "fence")
			event := func(tool string, input map[string]any) string {
				b, err := json.Marshal(map[string]any{"hook_event_name": "BeforeTool", "cwd": w.ws, "tool_name": tool, "tool_input": input})
				must(t, err)
				return string(b)
			}
			hook := fmt.Sprintf("%s -s %s hook gemini", fence, w.settings)
			for _, ev := range []string{
				event("run_shell_command", map[string]any{"command": "git push"}),
				event("read_file", map[string]any{"file_path": w.ws + "/secret.txt"}),
			} {
				if r := w.fence(t, ev, nil, "-c", hook); r.code != 0 || !strings.Contains(r.stdout, `"decision":"deny"`) {
					t.Errorf("%s inside fence: exit %d, %q, %s; want a denial", ev, r.code, r.stdout, r.stderr)
				}
			}
			r := w.fence(t, event("run_shell_command", map[string]any{"command": "cat secret.txt; cat README"}), nil, "-c", hook)
			var ans geminiAnswer
			if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
				t.Fatalf("the hook inside fence: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			command, _ := ans.HookSpecificOutput.ToolInput["command"].(string)
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
