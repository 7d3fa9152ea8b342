package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReportGolden pins the shape of --report for a command that preflight
// blocks (no sandbox needed): times and directories are replaced before
// the comparison with testdata/report/blocked.json.
func TestReportGolden(t *testing.T) {
	dir := workIn(t, "")
	must(t, os.WriteFile("fence.jsonc", []byte(`{"extends": "code", "command": {"deny": ["npm publish"]}}`), 0o644))
	if code, stderr := fence(t, "config", "trust"); code != 0 {
		t.Fatalf("config trust: exit %d: %s", code, stderr)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"--report", "out/../r.json", "-c", "npm test && npm publish --tag next"}, &stdout, &stderr); code != 125 {
		t.Fatalf("exit %d, want 125; stderr:\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	must(t, err)
	fi, err := os.Stat(filepath.Join(dir, "r.json"))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("report mode %v, want 0600", fi.Mode().Perm())
	}
	var rep runReport
	must(t, json.Unmarshal(b, &rep))
	if rep.Start.IsZero() || rep.End.Before(rep.Start) || len(rep.Denials) != 1 || rep.Denials[0].Time.IsZero() {
		t.Errorf("times: %+v", rep)
	}
	got := regexp.MustCompile(`"(start|end|time)": "[^"]+"`).ReplaceAll(b, []byte(`"$1": "TIME"`))
	got = bytes.ReplaceAll(got, []byte(dir), []byte("$DIR"))
	golden(t, "report/blocked.json", got)
}
