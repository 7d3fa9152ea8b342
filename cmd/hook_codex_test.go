package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHookCodex answers each event in testdata/hooks/codex (NAME.json,
// written from Codex's documented PreToolUse event, with $WORK the
// workspace and $FENCE the running fence) and compares the answer with
// NAME.out, rewritten under -update. Every answer comes with exit status
// 0 and nothing on stderr, and every answer is one Codex accepts: a deny
// with a reason, or an allow with updatedInput.
func TestHookCodex(t *testing.T) {
	hookGoldens(t, "codex", func(t *testing.T, out string) { codexAcceptable(t, out) })
}

// codexAcceptable fails unless out is no answer, a deny with a reason, or
// an allow with updatedInput: Codex takes any other answer for a failed
// hook and runs the call.
func codexAcceptable(t *testing.T, out string) {
	t.Helper()
	if out == "" {
		return
	}
	var a struct {
		HookSpecificOutput map[string]json.RawMessage `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answer %q: %v", out, err)
	}
	h := a.HookSpecificOutput
	for k := range h {
		if !slices.Contains([]string{"hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput"}, k) {
			t.Errorf("answer has %q, which Codex's schema does not", k)
		}
	}
	var event, decision, reason string
	json.Unmarshal(h["hookEventName"], &event)
	json.Unmarshal(h["permissionDecision"], &decision)
	json.Unmarshal(h["permissionDecisionReason"], &reason)
	_, updated := h["updatedInput"]
	switch {
	case event != "PreToolUse":
		t.Errorf("hookEventName %q", event)
	case decision == "deny" && (strings.TrimSpace(reason) == "" || updated):
		t.Errorf("a deny without a reason, or with updatedInput: %s", out)
	case decision == "allow" && !updated:
		t.Errorf("a bare allow, which Codex refuses: %s", out)
	case decision != "deny" && decision != "allow":
		t.Errorf("decision %q, which Codex does not honour", decision)
	}
}

// TestHookCodexEntryPoints: upstream's entry point answers as fence hook
// codex does.
func TestHookCodexEntryPoints(t *testing.T) {
	work := hookWorkspace(t)
	event := []byte(`{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"git push"}}`)
	want, _, _ := runHook(t, []string{"hook", "codex", "-s", work + "/fence.jsonc"}, event)
	if !strings.Contains(want, `"permissionDecision":"deny"`) {
		t.Fatalf("fence hook codex answered %q, want a denial", want)
	}
	for _, args := range [][]string{
		{"--codex-pre-tool-use", "-s", work + "/fence.jsonc"},
		{"-s", work + "/fence.jsonc", "--codex-pre-tool-use"},
		{"hook", "--codex-pre-tool-use", "-s", work + "/fence.jsonc"},
	} {
		if got, errOut, code := runHook(t, args, event); got != want || code != 0 {
			t.Errorf("fence %q: exit %d, answer %q, stderr %q; want %q", args, code, got, errOut, want)
		}
	}
	if got, _, code := runHook(t, []string{"hook", "claude", "--codex-pre-tool-use"}, event); code == 0 || got != "" {
		t.Errorf("two agents: exit %d, answer %q; want an error and no answer", code, got)
	}
}

// TestHookCodexAgreesWithCheck: for every path, an apply_patch that
// adds, updates, deletes or moves it is denied exactly when `fence check
// write` denies it, naming the same decision; a move is judged at both
// ends.
func TestHookCodexAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	paths := []string{"src/main.go", "src/new.go", "innocent", "secret/key.pem", "SECRET/Key.pem", "fence.jsonc", ".git/hooks/pre-commit",
		"missing/a/b", "/etc/hosts", "../x", "src/../secret/key.pem", ".codex/hooks.json"}
	t.Chdir(work)
	for _, p := range paths {
		var checkOut, checkErr bytes.Buffer
		code := Main([]string{"-s", settings, "check", "write", p}, &checkOut, &checkErr)
		line := strings.TrimSpace(checkOut.String())
		if code != 0 && code != 1 {
			t.Fatalf("%s: check exit %d: %s", p, code, checkErr.String())
		}
		for _, patch := range []string{
			"*** Begin Patch\n*** Add File: " + p + "\n+x\n*** End Patch",
			"*** Begin Patch\n*** Update File: " + p + "\n@@\n-x\n+y\n*** End Patch",
			"*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch",
			"*** Begin Patch\n*** Update File: src/main.go\n*** Move to: " + p + "\n@@\n-x\n+y\n*** End Patch",
			"*** Begin Patch\n*** Update File: " + p + "\n*** Move to: src/moved.go\n@@\n-x\n+y\n*** End Patch",
		} {
			input, _ := json.Marshal(map[string]string{"command": patch})
			event := fmt.Sprintf(`{"hook_event_name":"PreToolUse","cwd":%q,"tool_name":"apply_patch","tool_input":%s}`, work, input)
			out, _, _ := runHook(t, []string{"hook", "codex", "-s", settings}, []byte(event))
			switch {
			case code == 0 && out != "":
				t.Errorf("%s: check allows (%s), the hook answers %s for %q", p, line, out, patch)
			case code == 1 && !strings.Contains(out, `"permissionDecision":"deny"`):
				t.Errorf("%s: check denies (%s), the hook answers %q for %q", p, line, out, patch)
			case code == 1 && !strings.Contains(out, strings.ReplaceAll(line, `"`, `\"`)):
				t.Errorf("%s: the hook's reason %s does not hold check's %s", p, out, line)
			}
		}
	}
}

// TestHookCodexRewriteShapes: a rewritten shell call keeps the shape it
// came in, and what it runs is the command fence judged: the wrapped
// form of each shape is recognised as wrapped, so it is not wrapped
// twice.
func TestHookCodexRewriteShapes(t *testing.T) {
	work := hookWorkspace(t)
	args := []string{"hook", "codex", "-s", work + "/fence.jsonc"}
	for _, input := range []string{
		`{"command":"echo 'it''s' \"$HOME\" | wc -c"}`,
		`{"command":["printf","%s\n","it's","$HOME",""]}`,
		`{"kind":"argv","program":"printf","args":["%s\n","a b","'"]}`,
	} {
		event := fmt.Sprintf(`{"hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":%s}`, work, input)
		out, _, _ := runHook(t, args, []byte(event))
		var a struct {
			HookSpecificOutput struct {
				UpdatedInput map[string]json.RawMessage `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		must(t, json.Unmarshal([]byte(out), &a))
		updated, _ := json.Marshal(a.HookSpecificOutput.UpdatedInput)
		var orig, got map[string]any
		must(t, json.Unmarshal([]byte(input), &orig))
		must(t, json.Unmarshal(updated, &got))
		for k, v := range orig {
			if _, ok := got[k]; !ok && k != "command" {
				t.Errorf("%s: the rewrite dropped %s", input, k)
			}
			if fmt.Sprintf("%T", got[k]) != fmt.Sprintf("%T", v) && got[k] != nil {
				t.Errorf("%s: the rewrite changed %s from %T to %T", input, k, v, got[k])
			}
		}
		again := fmt.Sprintf(`{"hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":%s}`, work, updated)
		if out, _, _ := runHook(t, args, []byte(again)); out != "" {
			t.Errorf("%s: the rewritten call %s was answered again: %s", input, updated, out)
		}
	}
}

// TestHookCodexPanicDenies: a fault while judging a call denies it,
// since Codex runs a call whose hook died; here the hook has no policy
// flags to load a policy with.
func TestHookCodexPanicDenies(t *testing.T) {
	work := hookWorkspace(t)
	var out bytes.Buffer
	event := `{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"ls"}}`
	if err := (&hookOptions{stderr: io.Discard}).codex([]byte(event), nil, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"deny"`) || !strings.Contains(out.String(), "fence failed while judging") {
		t.Errorf("answer %q, want a denial naming the failure", out.String())
	}
	codexAcceptable(t, out.String())
}

// TestPatchPaths: the files a patch names, from Codex's lenient reading
// too (padding, CRLF, a here-document), and the patches refused.
func TestPatchPaths(t *testing.T) {
	for _, c := range []struct {
		patch string
		want  []string
	}{
		{"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", []string{"a"}},
		{"*** Begin Patch\r\n*** Update File: a b\r\n*** Move to: c\r\n@@\r\n-x\r\n+y\r\n*** End of File\r\n*** End Patch\r\n", []string{"a b", "c"}},
		{"<<\"EOF\"\n*** Begin Patch\n  *** Delete File: d  \n*** End Patch\nEOF", []string{"d"}},
		{"*** Begin Patch\n*** Update File: a\n@@\n *** Add File: hidden\n*** End Patch", []string{"a", "hidden"}},
		{"*** Begin Patch\n*** Update File: README.md\n@@\n * item\n-* old\n+* new\n*** End Patch", []string{"README.md"}},
	} {
		got, err := patchPaths(c.patch)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("patchPaths(%q) = %q, %v; want %q", c.patch, got, err, c.want)
		}
	}
	for _, patch := range []string{
		"", "*** Begin Patch", "*** Begin Patch\n*** Add File: a\n+x", "diff --git a/x b/x\n",
		"*** Begin Patch\n*** End Patch", "*** Begin Patch\n*** Add File: \n*** End Patch",
		"*** Begin Patch\n*** Add File: a\n*** Rename File: b\n*** End Patch",
		"*** Begin Patch\n*** Update File: a\n*bold\n*** End Patch",
		"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF",
	} {
		if got, err := patchPaths(patch); err == nil {
			t.Errorf("patchPaths(%q) = %q; want an error", patch, got)
		}
	}
}

// BenchmarkHookCodex measures one Codex hook decision in process, as
// BenchmarkHookClaude does for Claude Code: a shell call, rewritten, and
// an apply_patch of two files.
func BenchmarkHookCodex(b *testing.B) {
	work := hookWorkspace(b)
	patch, _ := json.Marshal("*** Begin Patch\n*** Add File: src/new.go\n+package main\n*** Update File: src/main.go\n@@\n-package x\n+package main\n*** End Patch\n")
	for _, bb := range []struct{ name, event string }{
		{"Bash", `{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"go test ./... && git status | head -5"}}`},
		{"apply_patch", `{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"apply_patch","tool_input":{"command":` + string(patch) + `}}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc", stderr: io.Discard}, stderr: io.Discard}
			event := []byte(bb.event)
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := o.codex(event, nil, io.Discard); err != nil {
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
