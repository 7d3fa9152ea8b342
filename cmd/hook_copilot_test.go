package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHookCopilot answers each event in testdata/hooks/copilot
// (NAME.json, written from the preToolUse event of GitHub's Copilot
// hooks reference, with $WORK the workspace and $FENCE the running
// fence) and compares the answer with NAME.out, rewritten under
// -update. Every answer comes with exit status 0 and nothing on stderr,
// and is one JSON object or nothing.
func TestHookCopilot(t *testing.T) {
	hookGoldens(t, "copilot", func(t *testing.T, out string) {
		var ans map[string]any
		if out != "" && json.Unmarshal([]byte(out), &ans) != nil {
			t.Errorf("answer %q is not one JSON object", out)
		}
	})
}

// TestHookCopilotRewrite: a rewritten bash call keeps every other
// argument, runs the command under fence with the hook's flags, and is
// seen as wrapped when it comes back: judged, not wrapped twice.
func TestHookCopilotRewrite(t *testing.T) {
	work := hookWorkspace(t)
	args := []string{"hook", "copilot", "-s", work + "/fence.jsonc"}
	for _, toolArgs := range []string{
		`{"command":"echo 'hi' && ls","description":"d","sessionId":"x"}`,
		fmt.Sprintf("%q", `{"command":"echo 'hi' && ls","description":"d","sessionId":"x"}`),
	} {
		event := `{"timestamp":1,"cwd":"` + work + `","toolName":"bash","toolArgs":` + toolArgs + `}`
		out, _, _ := runHook(t, args, []byte(event))
		var ans copilotAnswer
		must(t, json.Unmarshal([]byte(out), &ans))
		var command, desc string
		must(t, json.Unmarshal(ans.ModifiedArgs["command"], &command))
		must(t, json.Unmarshal(ans.ModifiedArgs["description"], &desc))
		o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc"}}
		if inner, ok := o.unwrap(selfPath(), work, command); !ok || inner != `echo 'hi' && ls` || desc != "d" || ans.PermissionDecision != "" || len(ans.ModifiedArgs) != 3 {
			t.Fatalf("toolArgs %s: answer %s; want the command wrapped, the other arguments kept, no decision", toolArgs, out)
		}
		again, _ := json.Marshal(map[string]any{"cwd": work, "toolName": "bash", "toolArgs": map[string]string{"command": command}})
		if out, _, _ := runHook(t, args, again); out != "" {
			t.Errorf("the rewritten call, sent again, answered %s; want nothing", out)
		}
		denied, _ := json.Marshal(map[string]any{"cwd": work, "toolName": "bash", "toolArgs": map[string]string{"command": o.wrap(selfPath(), work, "git push")}})
		if out, _, _ := runHook(t, args, denied); !strings.Contains(out, `"permissionDecision":"deny"`) {
			t.Errorf("a wrapped git push answered %q; want a denial", out)
		}
	}
}

// TestHookCopilotEntryPoints: upstream's entry point answers as fence
// hook copilot does, and two agents named at once are an error.
func TestHookCopilotEntryPoints(t *testing.T) {
	work := hookWorkspace(t)
	event := []byte(`{"timestamp":1,"cwd":"` + work + `","toolName":"bash","toolArgs":"{\"command\":\"git push\"}"}`)
	want, _, _ := runHook(t, []string{"hook", "copilot", "-s", work + "/fence.jsonc"}, event)
	if !strings.Contains(want, `"permissionDecision":"deny"`) {
		t.Fatalf("fence hook copilot answered %q, want a denial", want)
	}
	for _, args := range [][]string{
		{"--copilot-pre-tool-use", "-s", work + "/fence.jsonc"},
		{"-s", work + "/fence.jsonc", "--copilot-pre-tool-use"},
		{"hook", "--copilot-pre-tool-use", "-s", work + "/fence.jsonc"},
	} {
		if got, errOut, code := runHook(t, args, event); got != want || code != 0 {
			t.Errorf("fence %q: exit %d, answer %q, stderr %q; want %q", args, code, got, errOut, want)
		}
	}
	for _, args := range [][]string{
		{"hook", "claude", "--copilot-pre-tool-use"},
		{"hook", "--cursor-pre-tool-use", "--copilot-pre-tool-use"},
	} {
		if got, _, code := runHook(t, args, event); code == 0 || got != "" {
			t.Errorf("fence %q: exit %d, answer %q; want an error and no answer", args, code, got)
		}
	}
}

// TestHookCopilotAgreesWithCheck: for every file tool and path, toolArgs
// given either way, the hook denies exactly what `fence check` denies,
// naming the same decision.
func TestHookCopilotAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	paths := []string{"src/main.go", "innocent", "secret", "SECRET/Key.pem", "fence.jsonc", ".bashrc", ".git/hooks/x", "missing/a/b", "/etc/hosts", "../x", "src/../secret/key.pem"}
	t.Chdir(work)
	tools := map[string]string{"str_replace_editor view": "read", "str_replace_editor str_replace": "write", "apply_patch": "write"}
	for tool, ft := range copilotFileTools {
		tools[tool] = ft.access
	}
	for tool, access := range tools {
		for _, p := range paths {
			var checkOut, checkErr bytes.Buffer
			code := Main([]string{"-s", settings, "check", access, p}, &checkOut, &checkErr)
			line := strings.TrimSpace(checkOut.String())
			for _, event := range copilotFileEvents(work, tool, p) {
				out, _, _ := runHook(t, []string{"hook", "copilot", "-s", settings}, event)
				switch {
				case code == 0 && out != "":
					t.Errorf("%s %s: check allows (%s), the hook answers %s", tool, p, line, out)
				case code == 1 && !strings.Contains(out, `"permissionDecision":"deny"`):
					t.Errorf("%s %s: check denies (%s), the hook answers %q", tool, p, line, out)
				case code == 1 && !strings.Contains(out, strings.ReplaceAll(line, `"`, `\"`)):
					t.Errorf("%s %s: the hook's reason %s does not hold check's %s", tool, p, out, line)
				case code != 0 && code != 1:
					t.Errorf("%s %s: check exit %d: %s", tool, p, code, checkErr.String())
				}
			}
		}
	}
}

// copilotFileEvents are the preToolUse events of tool ("str_replace_editor
// COMMAND" for that tool's command) on path, toolArgs as an object and as
// a string.
func copilotFileEvents(work, tool, path string) [][]byte {
	args := map[string]string{"path": path}
	name, command, ok := strings.Cut(tool, " ")
	if ok {
		args["command"] = command
	}
	var toolArgs any = args
	if name == "apply_patch" {
		toolArgs = map[string]string{"input": "*** Begin Patch\n*** Update File: " + path + "\n@@\n-a\n+b\n*** End Patch\n"}
	}
	obj, _ := json.Marshal(toolArgs)
	var out [][]byte
	for _, a := range []any{json.RawMessage(obj), string(obj)} {
		b, _ := json.Marshal(map[string]any{"timestamp": 1, "cwd": work, "toolName": name, "toolArgs": a})
		out = append(out, b)
	}
	return out
}

// TestHookCopilotUntrusted: a discovered config the trust record does
// not vouch for denies every call fence judges, saying how to trust it,
// and leaves other tools alone.
func TestHookCopilotUntrusted(t *testing.T) {
	work := hookWorkspace(t)
	for tool, want := range map[string]string{"bash": "fence config trust", "view": "fence config trust", "task": ""} {
		event := fmt.Sprintf(`{"cwd":%q,"toolName":%q,"toolArgs":{"command":"ls","path":"src/main.go"}}`, work, tool)
		out, _, code := runHook(t, []string{"hook", "copilot"}, []byte(event))
		if code != 0 || want == "" && out != "" || want != "" && !(strings.Contains(out, `"deny"`) && strings.Contains(out, want)) {
			t.Errorf("%s: exit %d, answer %q; want a denial saying %q", tool, code, out, want)
		}
	}
}

// BenchmarkHookCopilot measures one Copilot hook decision in process, as
// BenchmarkHookClaude does for Claude Code: a bash call (rewritten) and
// a view.
func BenchmarkHookCopilot(b *testing.B) {
	work := hookWorkspace(b)
	for _, bb := range []struct{ name, event string }{
		{"bash", `{"timestamp":1,"cwd":"` + work + `","toolName":"bash","toolArgs":"{\"command\":\"go test ./... && git status | head -5\",\"description\":\"test\"}"}`},
		{"view", `{"timestamp":1,"cwd":"` + work + `","toolName":"view","toolArgs":"{\"path\":\"` + work + `/innocent\"}"}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc", stderr: io.Discard}, stderr: io.Discard}
			event := []byte(bb.event)
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := o.copilot(event, nil, io.Discard); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// TestHookCopilotSearchThroughLinks: a grep or rg whose tree holds a
// link into a denied tree is denied (Copilot's reference does not say
// whether its search follows links), one without is allowed.
func TestHookCopilotSearchThroughLinks(t *testing.T) {
	work := hookWorkspace(t)
	run := func(tool string) string {
		args, _ := json.Marshal(map[string]string{"pattern": "x", "path": "src"})
		event := fmt.Sprintf(`{"timestamp":1,"cwd":%q,"toolName":%q,"toolArgs":%q}`, work, tool, args)
		out, errOut, code := runHook(t, []string{"hook", "copilot", "-s", work + "/fence.jsonc"}, []byte(event))
		if code != 0 || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", tool, code, errOut)
		}
		return out
	}
	for _, tool := range []string{"grep", "rg"} {
		if out := run(tool); out != "" {
			t.Errorf("%s of src without a link: answered %q; want nothing (allowed)", tool, out)
		}
	}
	must(t, os.Symlink("../secret", work+"/src/lnk2"))
	for _, tool := range []string{"grep", "rg"} {
		if out := run(tool); !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "secret/**") {
			t.Errorf("%s of src with a link into secret: answered %q; want a denial naming the rule", tool, out)
		}
	}
}
