package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExitCodes pins fence's exit codes: the command's own status, 128+N
// for a signal, 126 and 127 as a shell's, 1 for lint --strict findings,
// and 125 for every fence error.
func TestExitCodes(t *testing.T) {
	dir := workIn(t, "")
	files := map[string]string{
		"broad.jsonc":  `{"filesystem": {"allowWrite": ["/"]}}`,
		"broken.jsonc": `{"filesystem": {"allowWrite": "."}}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"config", "show"}, 0},
		{[]string{"config", "lint", "-s", "broad.jsonc"}, 0},
		{[]string{"config", "lint", "--strict", "-s", "broad.jsonc"}, 1},
		{[]string{"config", "lint", "--strict", "-s", "broken.jsonc"}, 125},
		{[]string{"config", "show", "-s", "broken.jsonc"}, 125},
		{[]string{"config", "show", "-s", "missing.jsonc"}, 125},
		{[]string{"config", "show", "--no-such-flag"}, 125},
		{[]string{"config", "show", "extra-arg"}, 125},
		{[]string{"--", "true"}, 0},
		{[]string{"--", "false"}, 1},
		{[]string{"-c", "exit 42"}, 42},
		{[]string{"-c", "kill -TERM $$"}, 128 + 15},
		{[]string{"--", "no-such-command-anywhere"}, 127},
		{[]string{"--", "/etc/hostname"}, 126},
		{[]string{}, 125},
		{[]string{"--version"}, 0},
		{[]string{"check", "read", "broad.jsonc"}, 0},
		{[]string{"check", "write", "/usr/bin/x"}, 1},
		{[]string{"check", "frobnicate", "x"}, 125},
		{[]string{"config", "allow", "read", "/etc/shadow", "--file", "/etc/fence.jsonc"}, 125},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if got := Main(tt.args, &stdout, &stderr); got != tt.want {
			t.Errorf("fence %q exited %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
		}
	}
}
