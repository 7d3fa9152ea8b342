package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mkdirMode makes dir with exactly mode (the umask set aside).
func mkdirMode(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.Chmod(dir, mode))
	return dir
}

// TestHookBinaryReplaceable: a fence binary that another user or a
// sandboxed command could replace is refused for a hook entry, naming
// the nearest file or directory open to others; one only root and the
// user can write is let through, as is a path whose missing part only
// they could make.
func TestHookBinaryReplaceable(t *testing.T) {
	dir := mkdirMode(t, filepath.Join(t.TempDir(), "private"), 0o700)
	for _, c := range []struct {
		dir, why string
		mode     os.FileMode
	}{
		{"others", "may be written by anyone", 0o757},
		{"sticky", "may be written by anyone (sticky: anyone may add an entry)", os.ModeSticky | 0o777},
	} {
		d := mkdirMode(t, filepath.Join(dir, c.dir), c.mode)
		for _, exe := range []string{filepath.Join(d, "fence"), filepath.Join(d, "sub", "bin", "fence")} {
			err := checkHookBinary(exe)
			if err == nil || !strings.Contains(err.Error(), "refusing to write a hook that runs "+exe+": "+d+" "+c.why+", so") {
				t.Errorf("%s: %v, want it refused as %s %s", exe, err, d, c.why)
			}
		}
	}
	bin := mkdirMode(t, filepath.Join(dir, "bin"), 0o755)
	exe := filepath.Join(bin, "fence")
	must(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Chmod(exe, 0o777))
	if err := checkHookBinary(exe); err == nil || !strings.Contains(err.Error(), exe+" may be written by anyone") {
		t.Errorf("a world-writable binary: %v", err)
	}
	must(t, os.Symlink(filepath.Join(dir, "sticky"), filepath.Join(dir, "link")))
	if err := checkHookBinary(filepath.Join(dir, "link", "fence")); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "sticky")+" may be written") {
		t.Errorf("a link to a sticky directory: %v", err)
	}
	if os.Geteuid() == 0 {
		theirs := mkdirMode(t, filepath.Join(dir, "theirs"), 0o755)
		must(t, os.Chown(theirs, 65534, 65534))
		if err := checkHookBinary(filepath.Join(theirs, "fence")); err == nil || !strings.Contains(err.Error(), theirs+" belongs to uid 65534") {
			t.Errorf("a directory of uid 65534: %v", err)
		}
	}
	for _, ok := range []string{"/usr/local/bin/fence", "/usr/local/bin/no/such/fence"} {
		if err := checkHookBinary(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestHooksInstallTempBinary: install and print refuse to name a fence
// binary in a directory anyone may write (exit 125, nothing written),
// saying where to install fence instead; uninstall still works.
func TestHooksInstallTempBinary(t *testing.T) {
	dir := workIn(t, "home")
	testOnlyFenceExe = filepath.Join(mkdirMode(t, filepath.Join(dir, "go-build1", "b001", "exe"), os.ModeSticky|0o777), "fence")
	t.Cleanup(func() { testOnlyFenceExe = "" })
	for _, action := range []string{"print", "install"} {
		code, out, stderr := fenceOut(t, "hooks", action, "--claude")
		if code != 125 || out != "" || !strings.Contains(stderr, "refusing to write a hook that runs "+testOnlyFenceExe+": ") ||
			!strings.Contains(stderr, "~/.local/bin or /usr/local/bin") {
			t.Errorf("%s: exit %d\n%s%s", action, code, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "home")); err == nil {
		t.Error("install wrote below the home directory")
	}
	if code, _, stderr := fenceOut(t, "hooks", "uninstall", "--claude"); code != 0 {
		t.Errorf("uninstall: exit %d\n%s", code, stderr)
	}
}

// TestHooksRootForeignHome: as root, a settings file or directory on the
// way that belongs to another user (uid 65534 here) is refused, with
// nothing written or made and the file still theirs; so is a link of
// theirs on the way and a directory on the way others may write. Root's
// own tree below the sticky temporary directory is edited as before.
func TestHooksRootForeignHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "home")
	home := filepath.Join(dir, "home")
	settings := filepath.Join(home, ".claude", "settings.json")
	must(t, os.MkdirAll(filepath.Dir(settings), 0o700))
	must(t, os.WriteFile(settings, []byte("{}\n"), 0o600))
	for _, p := range []string{home, filepath.Dir(settings), settings} {
		must(t, os.Chown(p, 65534, 65534))
	}
	for _, args := range [][]string{
		{"print", "--claude"}, {"install", "--claude"}, {"uninstall", "--claude"}, {"install", "--codex"}, {"install", "--claude", "--file", settings},
	} {
		code, _, stderr := fenceOut(t, append([]string{"hooks"}, args...)...)
		if code != 125 || !strings.Contains(stderr, "belongs to uid 65534; run fence hooks as the user whose settings these are") {
			t.Errorf("%q: exit %d\n%s", args, code, stderr)
		}
	}
	fi, err := os.Stat(settings)
	must(t, err)
	if got := string(readOrNil(t, settings)); got != "{}\n" || isForeign(fi) == false {
		t.Errorf("%s now %q, owned by root: %v", settings, got, !isForeign(fi))
	}
	if _, err := os.Lstat(filepath.Join(home, ".codex")); err == nil {
		t.Error("install made ~/.codex in the user's home")
	}

	// A home of root's with ~/.claude a link of the user's to root's tree.
	rootHome := filepath.Join(dir, "roothome")
	target := filepath.Join(dir, "rootonly")
	must(t, os.MkdirAll(rootHome, 0o755))
	must(t, os.MkdirAll(target, 0o700))
	must(t, os.Symlink(target, filepath.Join(rootHome, ".claude")))
	must(t, os.Lchown(filepath.Join(rootHome, ".claude"), 65534, 65534))
	t.Setenv("HOME", rootHome)
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude"); code != 125 || !strings.Contains(stderr, filepath.Join(rootHome, ".claude")+" belongs to uid 65534") {
		t.Errorf("a link of the user's on the way: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(target, "settings.json")); err == nil {
		t.Error("root wrote where the user's link leads")
	}

	// A directory on the way anyone may write, not sticky.
	open := mkdirMode(t, filepath.Join(dir, "open"), 0o777)
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude", "--file", filepath.Join(open, "p", "settings.json")); code != 125 || !strings.Contains(stderr, open+" may be written by anyone") {
		t.Errorf("a world-writable directory on the way: exit %d\n%s", code, stderr)
	}
	// Sticky and world-writable, the entry below it not there yet: anyone could make it.
	sticky := mkdirMode(t, filepath.Join(dir, "sticky"), os.ModeSticky|0o777)
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude", "--file", filepath.Join(sticky, "new", "settings.json")); code != 125 || !strings.Contains(stderr, sticky+" may be written by anyone (sticky") {
		t.Errorf("a missing entry below a sticky directory: exit %d\n%s", code, stderr)
	}
	// Root's own directory below the sticky one: edited.
	mine := mkdirMode(t, filepath.Join(sticky, "mine"), 0o700)
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude", "--file", filepath.Join(mine, "settings.json")); code != 0 {
		t.Errorf("root's own directory below a sticky one: exit %d\n%s", code, stderr)
	}
}

// TestHooksRootLinkedHome: as root, a home reached through a link of
// root's that leads into another user's directory is refused before
// install makes the agent's directory there.
func TestHooksRootLinkedHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "link")
	theirs := mkdirMode(t, filepath.Join(dir, "theirs"), 0o755)
	must(t, os.Chown(theirs, 65534, 65534))
	must(t, os.Symlink(theirs, filepath.Join(dir, "link")))
	for _, agent := range []string{"--claude", "--codex", "--gemini", "--cursor", "--copilot"} {
		if code, _, stderr := fenceOut(t, "hooks", "install", agent); code != 125 || !strings.Contains(stderr, theirs+" belongs to uid 65534") {
			t.Errorf("%s: exit %d\n%s", agent, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Errorf("install made %v in the user's directory", entries)
	}
}

// TestHookBinaryGroupWritable: a directory its group may write is let
// through (Homebrew's /usr/local/bin, Debian's staff /usr/local). It is
// made below the package's directory, the temporary directory being
// open to anyone.
func TestHookBinaryGroupWritable(t *testing.T) {
	here, err := os.Getwd()
	must(t, err)
	if err := checkHookBinary(filepath.Join(here, "fence")); err != nil {
		t.Skipf("the package directory is open to others already: %v", err)
	}
	dir, err := os.MkdirTemp(here, "group-writable-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o775))
	if err := checkHookBinary(filepath.Join(dir, "fence")); err != nil {
		t.Errorf("a group-writable directory: %v", err)
	}
}
