package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestConfigShowTemplates pins `fence config show -t NAME` for every
// builtin template, stdout and stderr byte for byte, to golden files.
func TestConfigShowTemplates(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, name := range policy.TemplateNames() {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"config", "show", "--json-chain", "-t", name}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			golden(t, "show/"+name+".stdout.golden", stdout.Bytes())
			golden(t, "show/"+name+".stderr.golden", stderr.Bytes())
		})
	}
}

// testdata is the repository's testdata directory, found before any test
// changes the working directory.
var testdata, _ = filepath.Abs(filepath.Join("..", "testdata"))

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
