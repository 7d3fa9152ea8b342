package sandbox

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

func denial(requested string) Denial {
	p := "git push"
	return Denial{Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Layer: LayerPreflight, Decision: policy.Decision{
		Access: "command", Requested: requested, Rule: "command.deny", Pattern: &p, Source: "project config: /p/fence.jsonc",
	}}
}

func readLines(t *testing.T, path string) []Denial {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Denial
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d Denial
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, d)
	}
	return out
}

func TestAuditAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("OpenAudit left %v, %v; want an empty file of mode 0600", fi, err)
	}
	for _, r := range []string{"git push origin", "git push --force"} {
		if err := a.Append(denial(r)); err != nil {
			t.Fatal(err)
		}
	}
	got := readLines(t, path)
	if len(got) != 2 || got[1].Requested != "git push --force" || got[1].Layer != "preflight" || *got[1].Pattern != "git push" || got[1].Source == "" {
		t.Errorf("log holds %+v", got)
	}
}

// TestAuditRotation: a log last written yesterday moves to FILE.<day>,
// and rotated logs more than seven days old go.
func TestAuditRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	today := time.Date(2026, 11, 29, 9, 0, 0, 0, time.Local)
	day := func(n int) string { return today.AddDate(0, 0, n).Format("2006-01-02") }
	old := map[string]string{
		"audit.jsonl":             "yesterday\n",
		"audit.jsonl." + day(-8):  "eight days\n",
		"audit.jsonl." + day(-7):  "seven days\n",
		"audit.jsonl." + day(-2):  "two days\n",
		"audit.jsonl.not-a-date":  "kept\n",
		"other.jsonl." + day(-30): "kept\n",
	}
	for name, content := range old {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	yesterday := today.AddDate(0, 0, -1)
	if err := os.Chtimes(path, yesterday, yesterday); err != nil {
		t.Fatal(err)
	}
	a := &AuditLog{Path: path, Now: func() time.Time { return today }}
	if err := a.Append(denial("today")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"audit.jsonl." + day(-1):  "yesterday\n",
		"audit.jsonl." + day(-7):  "seven days\n",
		"audit.jsonl." + day(-2):  "two days\n",
		"audit.jsonl.not-a-date":  "kept\n",
		"other.jsonl." + day(-30): "kept\n",
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(want)+1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files: %q", names)
	}
	for name, content := range want {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
			t.Errorf("%s holds %q, %v; want %q", name, b, err, content)
		}
	}
	if got := readLines(t, path); len(got) != 1 || got[0].Requested != "today" {
		t.Errorf("the new log holds %+v", got)
	}
}

// TestAuditConcurrent: appends from many writers never interleave.
func TestAuditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &AuditLog{Path: path}
			for i := range 50 {
				if err := a.Append(denial(strings.Repeat("x", 100*w+i))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := readLines(t, path); len(got) != 400 {
		t.Errorf("%d lines, want 400", len(got))
	}
}

// TestAuditRefusesLink: a log that is a symlink (planted to make fence
// append to another file) is refused.
func TestAuditRefusesLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := (&AuditLog{Path: path}).Append(denial("x")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}
