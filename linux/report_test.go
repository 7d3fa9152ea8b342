//go:build linux

package linux_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/sandbox"
)

type report struct {
	Command  []string `json:"command"`
	Shell    string   `json:"shell"`
	ExitCode int      `json:"exitCode"`
	Chain    []struct {
		Kind, Path string
	} `json:"chain"`
	Denials []sandbox.Denial `json:"denials"`
}

// TestReportAndAudit runs commands that meet every layer fence observes
// (a refused connection, a refused exec, a blocked command line) and
// checks that --report and the audit log name each denial's rule,
// pattern and source, and that the sandbox cannot touch the audit log
// even where it may write.
func TestReportAndAudit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	policy := `{"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": ["example.com"]},
		"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}, "audit": {"file": "audit.jsonl"}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			r := w.fence(t, "", nil, "--report", w.base+"/run.json", "-c", `./netprobe connect 127.0.0.1:9; x=git; $x push origin`)
			check(t, r, 126, `HTTP/1.1 403 Forbidden`, `fence: blocked "git push origin"`)
			rep := readReport(t, w.base+"/run.json")
			if rep.ExitCode != 126 || rep.Shell == "" || len(rep.Chain) == 0 || rep.Chain[0].Kind != "settings" || rep.Chain[0].Path != w.settings {
				t.Errorf("report: %+v", rep)
			}
			source := "settings file: " + w.settings
			want := []denialWant{
				{"network", "127.0.0.1:9", "network.allowedDomains", "", ""},
				{"exec", "git push origin", "command.deny", "git push", source},
			}
			checkDenials(t, "report", rep.Denials, want)

			r = w.fence(t, "", nil, "--report", w.base+"/blocked.json", "-c", "git push")
			check(t, r, 125, "", `^fence: blocked "git push"`)
			rep = readReport(t, w.base+"/blocked.json")
			if rep.ExitCode != 125 {
				t.Errorf("blocked report: exit code %d", rep.ExitCode)
			}
			blocked := denialWant{"preflight", "git push", "command.deny", "git push", source}
			checkDenials(t, "blocked report", rep.Denials, []denialWant{blocked})

			audit := readAudit(t, w.ws+"/audit.jsonl")
			checkDenials(t, "audit log", audit, append(want, blocked))

			r = w.fence(t, "", nil, "-c", `echo forged >> audit.jsonl || echo denied; mv audit.jsonl x 2>/dev/null || echo denied; touch audit.jsonl.2020-01-01 && echo made`)
			check(t, r, 0, `^denied\ndenied\nmade\n$`, `audit.jsonl: Read-only file system`)
			if got := readAudit(t, w.ws+"/audit.jsonl"); len(got) != 3 {
				t.Errorf("the audit log changed: %d lines", len(got))
			}
		})
	}
}

type denialWant struct{ layer, requested, rule, pattern, source string }

func readReport(t *testing.T, path string) report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return rep
}

func readAudit(t *testing.T, path string) []sandbox.Denial {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []sandbox.Denial
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d sandbox.Denial
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

func checkDenials(t *testing.T, where string, got []sandbox.Denial, want []denialWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d denials, want %d: %+v", where, len(got), len(want), got)
		return
	}
	for i, w := range want {
		g := got[i]
		pattern := ""
		if g.Pattern != nil {
			pattern = *g.Pattern
		}
		if g.Layer != w.layer || g.Requested != w.requested || g.Rule != w.rule || pattern != w.pattern || g.Source != w.source || g.Allowed || g.Time.IsZero() {
			t.Errorf("%s: denial %d = %+v (pattern %q), want %+v", where, i, g, pattern, w)
		}
	}
}
