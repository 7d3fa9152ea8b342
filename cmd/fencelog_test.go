package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type closeBuffer struct{ bytes.Buffer }

func (*closeBuffer) Close() error { return nil }

// TestLogSplitter routes each line: debug lines, and monitor summaries
// under -m, to the log; refusals under -m to both; everything else to
// stderr; lines split across writes whole, a last partial line at Close.
func TestLogSplitter(t *testing.T) {
	tests := []struct {
		monitor     bool
		writes      []string
		log, stderr string
	}{
		{false, []string{"fence: debug: a\nfence: warning: b\n"}, "fence: debug: a\n", "fence: warning: b\n"},
		{false, []string{"fence: deb", "ug: split\n"}, "fence: debug: split\n", ""},
		{false, []string{"fence: blocked http x — y\n"}, "", "fence: blocked http x — y\n"},
		{true, []string{"fence: blocked http x — y\nfence: monitor: 1 connections blocked\n"}, "fence: blocked http x — y\nfence: monitor: 1 connections blocked\n", "fence: blocked http x — y\n"},
		{true, []string{"fence: blocked \"git push\": matches command.deny \"git push\"\n"}, "fence: blocked \"git push\": matches command.deny \"git push\"\n", "fence: blocked \"git push\": matches command.deny \"git push\"\n"},
		{true, []string{"fence: warning: w\nfence: hint: h\n"}, "", "fence: warning: w\nfence: hint: h\n"},
		{true, []string{"fence: error: no\n", "fence: refused an exec\n"}, "", "fence: error: no\nfence: refused an exec\n"},
		{false, []string{"fence: debug: no newline"}, "fence: debug: no newline", ""},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		log := &closeBuffer{}
		s := &logSplitter{stderr: &stderr, log: log, monitor: tt.monitor}
		for _, w := range tt.writes {
			if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		s.Close()
		if log.String() != tt.log || stderr.String() != tt.stderr {
			t.Errorf("writes %q (monitor %v): log %q, stderr %q; want %q, %q", tt.writes, tt.monitor, log.String(), stderr.String(), tt.log, tt.stderr)
		}
	}
}

// TestOpenFenceLog appends to a log with mode 0600 and refuses a link
// and what is not a regular file.
func TestOpenFenceLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	if err := os.WriteFile(log, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, abs, err := openFenceLog(log)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("after\n")
	f.Close()
	if data, _ := os.ReadFile(log); string(data) != "before\nafter\n" || abs != log {
		t.Errorf("log holds %q (at %q), want appended", data, abs)
	}
	fresh := filepath.Join(dir, "fresh")
	f, _, err = openFenceLog(fresh)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("fresh log: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if err := os.Symlink(log, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"link": "refused: it is a symbolic link", ".": "open: ", "": "empty path"} {
		p := name
		if name != "" {
			p = filepath.Join(dir, name)
		}
		if _, _, err := openFenceLog(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("openFenceLog(%q) = %v, want an error with %q", p, err, want)
		}
	}
}
