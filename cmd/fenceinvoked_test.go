package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFenceInvoked: the path fence was run by, made absolute, links kept.
func TestFenceInvoked(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(dir+"/bin", 0o755))
	must(os.WriteFile(dir+"/real", []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink(dir+"/real", dir+"/bin/fence-link"))
	t.Chdir(dir)
	t.Setenv("PATH", dir+"/bin")
	wd, err := os.Getwd()
	must(err)
	for arg0, want := range map[string]string{
		"./bin/fence-link":      filepath.Join(wd, "bin/fence-link"),
		"bin/../bin/fence-link": filepath.Join(wd, "bin/fence-link"),
		dir + "/bin/fence-link": dir + "/bin/fence-link",
		"fence-link":            dir + "/bin/fence-link",
		"no-such-fence-in-path": "",
	} {
		if got := fenceInvoked(arg0); got != want {
			t.Errorf("fenceInvoked(%q) = %q, want %q", arg0, got, want)
		}
	}
}
