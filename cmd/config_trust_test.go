package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestUntrustedExitCodes: a run and check refuse an untrusted discovered
// config with 125 before anything starts; config show prints it.
func TestUntrustedExitCodes(t *testing.T) {
	dir := workIn(t, "home")
	must(t, os.WriteFile(filepath.Join(dir, "fence.jsonc"), []byte(`{"filesystem": {"allowWrite": ["/var"]}}`), 0o644))
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--", "true"}, 125},
		{[]string{"-c", "echo ran"}, 125},
		{[]string{"check", "read", "x"}, 125},
		{[]string{"plan", "--", "true"}, 125},
		{[]string{"config", "show"}, 0},
		{[]string{"-s", "fence.jsonc", "check", "read", "x"}, 0},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		got := Main(tt.args, &stdout, &stderr)
		if got != tt.want {
			t.Errorf("fence %q exited %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
		}
		if strings.Contains(stdout.String(), "ran") {
			t.Errorf("fence %q ran the command under an untrusted config", tt.args)
		}
	}
}

// TestTrustRecordFile: the record is created private, in a private
// directory, and holds what was trusted.
func TestTrustRecordFile(t *testing.T) {
	dir := workIn(t, "home")
	content := []byte(`{"allowPty": true}`)
	must(t, os.WriteFile(filepath.Join(dir, "fence.jsonc"), content, 0o644))
	if code, stderr := fence(t, "config", "trust"); code != 0 {
		t.Fatalf("config trust: exit %d: %s", code, stderr)
	}
	userDir := filepath.Join(dir, "home/.config/fence")
	for path, want := range map[string]os.FileMode{userDir: 0o700, filepath.Join(userDir, trustName): 0o600} {
		fi, err := os.Stat(path)
		must(t, err)
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	rec, err := trustStore{userDir}.read()
	must(t, err)
	if !rec.Trusts(filepath.Join(dir, "fence.jsonc"), policy.HashConfig(content)) {
		t.Errorf("record %+v does not trust fence.jsonc", rec)
	}
	leftovers, _ := filepath.Glob(filepath.Join(userDir, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %q", leftovers)
	}
}

// TestTrustConcurrent: fences trusting at the same time keep each other's
// entries.
func TestTrustConcurrent(t *testing.T) {
	dir := workIn(t, "home")
	const n = 8
	for i := range n {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%d.jsonc", i)), fmt.Appendf(nil, `{"filesystem": {"allowRead": ["r%d"]}}`, i), 0o644))
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			codes[i] = Main([]string{"config", "trust", fmt.Sprintf("c%d.jsonc", i)}, &stdout, &stderr)
		})
	}
	wg.Wait()
	rec, err := trustStore{filepath.Join(dir, "home/.config/fence")}.read()
	must(t, err)
	for i := range n {
		if codes[i] != 0 {
			t.Errorf("trust c%d.jsonc: exit %d", i, codes[i])
		}
		if _, ok := rec.Files[filepath.Join(dir, fmt.Sprintf("c%d.jsonc", i))]; !ok {
			t.Errorf("c%d.jsonc is missing from the record", i)
		}
	}
}

// TestProtectedConfig: files in the user config dir need no trust, unless
// a link there leads out of it.
func TestProtectedConfig(t *testing.T) {
	dir := t.TempDir()
	userDir := filepath.Join(dir, "config/fence")
	must(t, os.MkdirAll(userDir, 0o700))
	must(t, os.WriteFile(filepath.Join(userDir, "fence.jsonc"), []byte("{}"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "elsewhere.jsonc"), []byte("{}"), 0o600))
	must(t, os.Symlink(filepath.Join(dir, "elsewhere.jsonc"), filepath.Join(userDir, "linked.jsonc")))
	must(t, os.Symlink(filepath.Join(dir, "config"), filepath.Join(dir, "alias")))
	tests := []struct {
		userDir, path string
		want          bool
	}{
		{userDir, filepath.Join(userDir, "fence.jsonc"), true},
		{userDir, filepath.Join(userDir, "linked.jsonc"), false},
		{userDir, filepath.Join(dir, "elsewhere.jsonc"), false},
		{filepath.Join(dir, "alias/fence"), filepath.Join(dir, "alias/fence/fence.jsonc"), true},
		{filepath.Join(dir, "missing"), filepath.Join(dir, "missing/fence.jsonc"), false},
	}
	for _, tt := range tests {
		if got := protectedConfig(tt.userDir)(tt.path); got != tt.want {
			t.Errorf("protectedConfig(%q)(%q) = %v, want %v", tt.userDir, tt.path, got, tt.want)
		}
	}
}

func TestTrustCommand(t *testing.T) {
	tests := []struct {
		problems []policy.TrustProblem
		want     string
	}{
		{[]policy.TrustProblem{{Path: "/w/fence.jsonc", Now: "a"}}, "fence config trust /w/fence.jsonc"},
		{[]policy.TrustProblem{{Path: "/w/my dir/fence.jsonc", Now: "a"}}, "fence config trust '/w/my dir/fence.jsonc'"},
		{[]policy.TrustProblem{{Path: "/w/it's/fence.jsonc", Now: "a"}}, `fence config trust '/w/it'\''s/fence.jsonc'`},
		{[]policy.TrustProblem{{Path: "/w/fence.jsonc", Was: "a"}}, "fence config trust"},
		{[]policy.TrustProblem{{Path: "/w/a.jsonc", Now: "a"}, {Path: "/w/b.jsonc", Now: "b"}}, "fence config trust"},
	}
	for _, tt := range tests {
		if got := trustCommand(tt.problems); got != tt.want {
			t.Errorf("trustCommand(%+v) = %q, want %q", tt.problems, got, tt.want)
		}
	}
}
