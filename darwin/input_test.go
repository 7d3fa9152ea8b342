package darwin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHostFinder looks at a real directory: a command found through a
// link gives the link and its target, and a path resolves as far as it
// exists, the rest joined back.
func TestHostFinder(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin, real := filepath.Join(dir, "bin"), filepath.Join(dir, "real")
	for _, d := range []string{bin, real} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(real, "tool-1.2"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "tool-1.2"), filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "data"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	h := HostFinder{Path: "relative:" + bin}
	want := Executable{Path: filepath.Join(bin, "tool"), Target: filepath.Join(real, "tool-1.2")}
	if got := h.Executables("tool"); !slices.Contains(got, want) {
		t.Errorf("Executables(tool) = %v, want %v among them", got, want)
	}
	if got := h.Executables("data"); len(got) != 0 {
		t.Errorf("a file that is not executable was found: %v", got)
	}
	for in, want := range map[string]string{
		filepath.Join(dir, "link", "tool-1.2"):  filepath.Join(real, "tool-1.2"),
		filepath.Join(dir, "link", "missing/x"): filepath.Join(real, "missing/x"),
		filepath.Join(dir, "nothing", "here"):   filepath.Join(dir, "nothing", "here"),
	} {
		if got := h.Resolve(in); got != want {
			t.Errorf("Resolve(%s) = %s, want %s", in, got, want)
		}
	}
}
