package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codexHookCases are the Codex hooks.json files under
// testdata/hooks/install-codex/<name>, laid out as hookCases' are.
var codexHookCases = []string{"nofile", "empty", "commented", "installed", "upstream", "oneline", "parseerror", "notarray", "toplevel"}

// TestHooksInstallCodex installs, installs again, and uninstalls fence's
// Codex hook in each case's ~/.codex/hooks.json, comparing the diff print
// shows and each result with the golden files. A second install must
// leave the same bytes and no new backup; a refused file must be left as
// it was. A file that was plain JSON stays plain JSON, which Codex reads.
func TestHooksInstallCodex(t *testing.T) {
	for _, name := range codexHookCases {
		t.Run(name, func(t *testing.T) {
			testOnlyFenceExe = "/usr/local/bin/fence"
			t.Cleanup(func() { testOnlyFenceExe = "" })
			dir, err := filepath.Abs(filepath.Join("testdata", "hooks", "install-codex", name))
			must(t, err)
			home, settings := agentHome(t, "codex", dir)
			code, out, errOut := fenceOut(t, "hooks", "print", "--codex")
			if code != 0 {
				compareGolden(t, filepath.Join(dir, "error.golden"), []byte(strings.ReplaceAll(errOut, home, "$HOME")))
				if code, _, _ := fenceOut(t, "hooks", "install", "--codex"); code == 0 {
					t.Fatal("install succeeded where print failed")
				}
				compareFiles(t, filepath.Join(dir, "before.json"), settings)
				return
			}
			compareGolden(t, filepath.Join(dir, "print.diff"), []byte(strings.ReplaceAll(out, home, "$HOME")))
			wasJSON := name != "commented"
			hooksRun(t, "codex", "install")
			installed := readOrNil(t, settings)
			compareGolden(t, filepath.Join(dir, "after-install.json"), installed)
			if wasJSON && !json.Valid(installed) {
				t.Errorf("install made plain JSON into JSONC:\n%s", installed)
			}
			baks := backupCount(t, settings)
			if name == "installed" && baks != 0 {
				t.Errorf("install of a file holding the hook already made a backup")
			}
			hooksRun(t, "codex", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			if n := backupCount(t, settings); n != baks {
				t.Errorf("second install made a backup: %d, was %d", n, baks)
			}
			hooksRun(t, "codex", "uninstall")
			compareGolden(t, filepath.Join(dir, "after-uninstall.json"), readOrNil(t, settings))
		})
	}
}

// TestHooksCodexFlags: the hook entry carries install's policy flags,
// --file edits the file named, and install says that Codex runs the hook
// only once it is trusted, and which releases need the feature flag.
func TestHooksCodexFlags(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "home")
	t.Setenv("CODEX_HOME", "")
	file := filepath.Join(dir, "proj", ".codex", "hooks.json")
	code, _, errOut := fenceOut(t, "-t", "code", "hooks", "install", "--codex", "--file", file)
	if code != 0 {
		t.Fatalf("install --file: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"/hooks", "codex_hooks = true", file} {
		if !strings.Contains(errOut, want) {
			t.Errorf("install said %q; want it to name %q", errOut, want)
		}
	}
	got := string(readOrNil(t, file))
	if strings.Count(got, `"/usr/local/bin/fence hook codex --template code"`) != 1 {
		t.Errorf("hooks.json holds:\n%s\nwant the entry with --template code once", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "home", ".codex")); !os.IsNotExist(err) {
		t.Errorf("install --file touched the user's ~/.codex: %v", err)
	}
	if code, _, _ := fenceOut(t, "hooks", "print", "--codex", "--cursor"); code == 0 {
		t.Error("print --codex --cursor succeeded")
	}
}

// TestCodexMatcher: the installed matcher, read as Codex reads it (a
// regular expression over the tool name), sends Codex every tool the
// hook judges.
func TestCodexMatcher(t *testing.T) {
	re := regexp.MustCompile(codexMatcher)
	for tool := range codexJudged {
		if !re.MatchString(tool) {
			t.Errorf("matcher %q does not send %s to the hook", codexMatcher, tool)
		}
	}
}

// TestIsFenceCodexHook: fence's and upstream's Codex entries are found,
// other commands and fence's entries for other agents are not.
func TestIsFenceCodexHook(t *testing.T) {
	for command, want := range map[string]bool{
		"/usr/local/bin/fence hook codex":             true,
		"fence -t code hook codex":                    true,
		"/opt/x/fence --codex-pre-tool-use":           true,
		"'/my dir/fence' hook codex --settings /p":    true,
		"/usr/local/bin/fence hook claude":            false,
		"fence --claude-pre-tool-use":                 false,
		"fence -c 'fence hook codex'":                 false,
		"fence hook codex; rm -rf ~":                  false,
		"notfence hook codex":                         false,
		"FOO=1 fence hook codex":                      false,
		"/usr/local/bin/fence -- hook codex":          false,
		"/usr/local/bin/fence --command=x hook codex": false,
	} {
		if got := isFenceCodexHook(command, "/usr/local/bin/fence"); got != want {
			t.Errorf("isFenceCodexHook(%q) = %v, want %v", command, got, want)
		}
	}
}
