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

// TestHookCursor answers each event in testdata/hooks/cursor (NAME.json,
// written from Cursor's documented events, with $WORK the workspace and
// $FENCE the running fence) and compares the answer with NAME.out,
// rewritten under -update. Every answer comes with exit status 0 and
// nothing on stderr.
func TestHookCursor(t *testing.T) { hookGoldens(t, "cursor", nil) }

// TestHookCursorEntryPoints: upstream's entry point answers as fence
// hook cursor does, and two agents named at once are an error.
func TestHookCursorEntryPoints(t *testing.T) {
	work := hookWorkspace(t)
	event := []byte(`{"hook_event_name":"beforeShellExecution","cwd":"` + work + `","command":"git push"}`)
	want, _, _ := runHook(t, []string{"hook", "cursor", "-s", work + "/fence.jsonc"}, event)
	if !strings.Contains(want, `"permission":"deny"`) {
		t.Fatalf("fence hook cursor answered %q, want a denial", want)
	}
	for _, args := range [][]string{
		{"--cursor-pre-tool-use", "-s", work + "/fence.jsonc"},
		{"-s", work + "/fence.jsonc", "--cursor-pre-tool-use"},
		{"hook", "--cursor-pre-tool-use", "-s", work + "/fence.jsonc"},
	} {
		if got, errOut, code := runHook(t, args, event); got != want || code != 0 {
			t.Errorf("fence %q: exit %d, answer %q, stderr %q; want %q", args, code, got, errOut, want)
		}
	}
	for _, args := range [][]string{
		{"hook", "claude", "--cursor-pre-tool-use"},
		{"hook", "--claude-pre-tool-use", "--cursor-pre-tool-use"},
	} {
		if got, _, code := runHook(t, args, event); code == 0 || got != "" {
			t.Errorf("fence %q: exit %d, answer %q; want an error and no answer", args, code, got)
		}
	}
}

// TestHookCursorAgreesWithCheck: for every path, beforeReadFile denies
// exactly what `fence check read` denies, naming the same decision.
func TestHookCursorAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	paths := []string{"src/main.go", "innocent", "secret", "SECRET/Key.pem", "fence.jsonc", "missing/a/b", "/etc/hosts", "../x", "src/../secret/key.pem"}
	t.Chdir(work)
	for _, p := range paths {
		var checkOut, checkErr bytes.Buffer
		code := Main([]string{"-s", settings, "check", "read", p}, &checkOut, &checkErr)
		event := fmt.Sprintf(`{"hook_event_name":"beforeReadFile","workspace_roots":[%q],"file_path":%q,"content":""}`, work, p)
		out, _, _ := runHook(t, []string{"hook", "cursor", "-s", settings}, []byte(event))
		line := strings.TrimSpace(checkOut.String())
		switch {
		case code == 0 && out != "":
			t.Errorf("%s: check allows (%s), the hook answers %s", p, line, out)
		case code == 1 && !strings.Contains(out, `"permission":"deny"`):
			t.Errorf("%s: check denies (%s), the hook answers %q", p, line, out)
		case code == 1 && !strings.Contains(out, strings.ReplaceAll(line, `"`, `\"`)):
			t.Errorf("%s: the hook's reason %s does not hold check's %s", p, out, line)
		case code != 0 && code != 1:
			t.Errorf("%s: check exit %d: %s", p, code, checkErr.String())
		}
	}
}

// BenchmarkHookCursor measures one Cursor hook decision in process, as
// BenchmarkHookClaude does for Claude Code: a shell call and a read.
func BenchmarkHookCursor(b *testing.B) {
	work := hookWorkspace(b)
	for _, bb := range []struct{ name, event string }{
		{"beforeShellExecution", `{"hook_event_name":"beforeShellExecution","workspace_roots":["` + work + `"],"cwd":"` + work + `","command":"go test ./... && git status | head -5"}`},
		{"beforeReadFile", `{"hook_event_name":"beforeReadFile","workspace_roots":["` + work + `"],"file_path":"` + work + `/innocent","content":""}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc", stderr: io.Discard}, stderr: io.Discard}
			event := []byte(bb.event)
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := o.cursor(event, nil, io.Discard); err != nil {
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

// TestHookCursorMultiRoot: in a workspace of two roots, each with its own
// trusted config, a read of a file in the second root is judged by that
// root's policy too, not by the first root's alone: in every spelling of
// the path and where its links lead.
func TestHookCursorMultiRoot(t *testing.T) {
	hookWorkspace(t)
	base, err := os.MkdirTemp("/var/tmp", "fence-multiroot-") // below /tmp, each root's policy sees the other's private
	mustTB(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	r1, r2 := base+"/r1", base+"/r2"
	mustTB(t, os.MkdirAll(base+"/home", 0o755))
	t.Setenv("HOME", base+"/home") // "~/../r2" is r2
	for dir, policy := range map[string]string{r1: `{"filesystem": {"allowWrite": ["."]}}`, r2: `{"filesystem": {"denyRead": ["secret/**"]}}`} {
		mustTB(t, os.MkdirAll(dir+"/secret", 0o755))
		mustTB(t, os.WriteFile(dir+"/secret/key", nil, 0o600))
		mustTB(t, os.WriteFile(dir+"/fence.jsonc", []byte(policy), 0o644))
		var out, errOut bytes.Buffer
		if code := Main([]string{"config", "trust", dir + "/fence.jsonc"}, &out, &errOut); code != 0 {
			t.Fatalf("trust %s: %d %s", dir, code, errOut.String())
		}
	}
	mustTB(t, os.Symlink(r2+"/secret", r1+"/lnk"))
	mustTB(t, os.Symlink(r1+"/secret", r1+"/lnk1"))
	for _, c := range []struct {
		roots []string
		file  string
		deny  bool
	}{
		{[]string{r2}, r2 + "/secret/key", true},
		{[]string{r1, r2}, r2 + "/secret/key", true},
		{[]string{r1, r2}, r1 + "/secret/key", false},
		{[]string{r2, r1}, r1 + "/secret/key", false}, // r2's relative rule is r2's
		{[]string{r1, r2}, r1 + "/lnk/key", true},     // a link from r1 into r2's denied tree
		{[]string{r1, r2}, r1 + "/lnk", true},
		{[]string{r1, r2}, " " + r2 + "/secret/key", true}, // the trimmed spelling lies in r2
		{[]string{r1, r2}, "~/../r2/secret/key", true},     // so does the one from the home
		{[]string{r1, r2}, r1 + "/lnk1/key", false},        // a link within r1
	} {
		roots, _ := json.Marshal(c.roots)
		event := fmt.Sprintf(`{"hook_event_name":"beforeReadFile","workspace_roots":%s,"file_path":%q,"content":""}`, roots, c.file)
		out, _, _ := runHook(t, []string{"hook", "cursor"}, []byte(event))
		if denied := strings.Contains(out, `"permission":"deny"`); denied != c.deny {
			t.Errorf("roots %v, read %s: answer %q, want denied %v", c.roots, c.file, out, c.deny)
		}
	}
}
