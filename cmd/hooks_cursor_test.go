package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// cursorHookCases are the Cursor hooks.json files under
// testdata/hooks/install-cursor/<name>, laid out as hookCases' are.
var cursorHookCases = []string{"nofile", "empty", "commented", "installed", "upstream", "oneline", "parseerror", "notarray"}

// TestHooksInstallCursor installs, installs again, and uninstalls fence's
// Cursor hooks in each case's ~/.cursor/hooks.json, comparing the diff
// print shows and each result with the golden files. A second install
// must leave the same bytes and no new backup; a refused file must be
// left as it was.
func TestHooksInstallCursor(t *testing.T) {
	for _, name := range cursorHookCases {
		t.Run(name, func(t *testing.T) {
			testOnlyFenceExe = "/usr/local/bin/fence"
			t.Cleanup(func() { testOnlyFenceExe = "" })
			dir, err := filepath.Abs(filepath.Join("testdata", "hooks", "install-cursor", name))
			must(t, err)
			home, settings := agentHome(t, "cursor", dir)
			code, out, errOut := fenceOut(t, "hooks", "print", "--cursor")
			if code != 0 {
				compareGolden(t, filepath.Join(dir, "error.golden"), []byte(strings.ReplaceAll(errOut, home, "$HOME")))
				if code, _, _ := fenceOut(t, "hooks", "install", "--cursor"); code == 0 {
					t.Fatal("install succeeded where print failed")
				}
				compareFiles(t, filepath.Join(dir, "before.json"), settings)
				return
			}
			compareGolden(t, filepath.Join(dir, "print.diff"), []byte(strings.ReplaceAll(out, home, "$HOME")))
			hooksRun(t, "cursor", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			baks := backupCount(t, settings)
			if name == "installed" && baks != 0 {
				t.Errorf("install of a file holding the hooks already made a backup")
			}
			hooksRun(t, "cursor", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			if n := backupCount(t, settings); n != baks {
				t.Errorf("second install made a backup: %d, was %d", n, baks)
			}
			hooksRun(t, "cursor", "uninstall")
			compareGolden(t, filepath.Join(dir, "after-uninstall.json"), readOrNil(t, settings))
		})
	}
}

// TestHooksCursorFlags: the hook entry carries install's policy flags,
// --file edits the file named, and naming two agents is an error.
func TestHooksCursorFlags(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "proj")
	file := filepath.Join(dir, "proj", ".cursor", "hooks.json")
	if code, _, errOut := fenceOut(t, "-t", "code", "hooks", "install", "--cursor", "--file", file); code != 0 {
		t.Fatalf("install --file: exit %d\n%s", code, errOut)
	}
	got := string(readOrNil(t, file))
	if strings.Count(got, `"/usr/local/bin/fence hook cursor --template code"`) != 2 {
		t.Errorf("hooks.json holds:\n%s\nwant the entry with --template code under both events", got)
	}
	if code, _, _ := fenceOut(t, "hooks", "print", "--cursor", "--claude"); code == 0 {
		t.Error("print --cursor --claude succeeded")
	}
}

// TestIsFenceCursorHook: fence's and upstream's Cursor entries are found,
// other commands and fence's Claude Code entry are not.
func TestIsFenceCursorHook(t *testing.T) {
	for command, want := range map[string]bool{
		"/usr/local/bin/fence hook cursor":             true,
		"fence -t code hook cursor":                    true,
		"/opt/x/fence --cursor-pre-tool-use":           true,
		"'/my dir/fence' hook cursor --settings /p":    true,
		"/usr/local/bin/fence hook claude":             false,
		"fence -c 'fence hook cursor'":                 false,
		"fence hook cursor; rm -rf ~":                  false,
		"notfence hook cursor":                         false,
		"FOO=1 fence hook cursor":                      false,
		"/usr/local/bin/fence -- hook cursor":          false,
		"/usr/local/bin/fence --command=x hook cursor": false,
	} {
		if got := isFenceCursorHook(command, "/usr/local/bin/fence"); got != want {
			t.Errorf("isFenceCursorHook(%q) = %v, want %v", command, got, want)
		}
	}
}
