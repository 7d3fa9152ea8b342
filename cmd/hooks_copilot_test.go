package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// copilotHookCases are the Copilot hook files under
// testdata/hooks/install-copilot/<name>, laid out as hookCases' are.
var copilotHookCases = []string{"nofile", "empty", "commented", "installed", "upstream", "oneline", "noversion", "parseerror", "notarray", "version2", "disabled"}

// TestHooksInstallCopilot installs, installs again, and uninstalls
// fence's Copilot hook in each case's ~/.copilot/hooks/fence.json,
// comparing the diff print shows and each result with the golden files.
// A second install must leave the same bytes and no new backup; a
// refused file must be left as it was, by install and by print.
func TestHooksInstallCopilot(t *testing.T) {
	for _, name := range copilotHookCases {
		t.Run(name, func(t *testing.T) {
			testOnlyFenceExe = "/usr/local/bin/fence"
			t.Cleanup(func() { testOnlyFenceExe = "" })
			dir, err := filepath.Abs(filepath.Join("testdata", "hooks", "install-copilot", name))
			must(t, err)
			home, settings := agentHome(t, "copilot", dir)
			code, out, errOut := fenceOut(t, "hooks", "print", "--copilot")
			if code != 0 {
				compareGolden(t, filepath.Join(dir, "error.golden"), []byte(strings.ReplaceAll(errOut, home, "$HOME")))
				compareFiles(t, filepath.Join(dir, "before.json"), settings)
				if code, _, _ := fenceOut(t, "hooks", "install", "--copilot"); code == 0 {
					t.Fatal("install succeeded where print failed")
				}
				compareFiles(t, filepath.Join(dir, "before.json"), settings)
				return
			}
			compareGolden(t, filepath.Join(dir, "print.diff"), []byte(strings.ReplaceAll(out, home, "$HOME")))
			if _, err := os.Stat(settings); name == "nofile" && err == nil {
				t.Fatal("print wrote the file")
			}
			hooksRun(t, "copilot", "install")
			installed := readOrNil(t, settings)
			compareGolden(t, filepath.Join(dir, "after-install.json"), installed)
			if _, err := hujson.Standardize(installed); err != nil {
				t.Errorf("the installed file is not JSONC: %v", err)
			}
			if name == "nofile" {
				copilotModes(t, settings)
			}
			baks := backupCount(t, settings)
			if name == "installed" && baks != 0 {
				t.Errorf("install of a file holding the hook already made a backup")
			}
			hooksRun(t, "copilot", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			if n := backupCount(t, settings); n != baks {
				t.Errorf("second install made a backup: %d, was %d", n, baks)
			}
			hooksRun(t, "copilot", "uninstall")
			compareGolden(t, filepath.Join(dir, "after-uninstall.json"), readOrNil(t, settings))
		})
	}
}

// copilotModes: a hook file fence made is the user's alone, and so are
// the directories it made on the way.
func copilotModes(t *testing.T, settings string) {
	t.Helper()
	for path, want := range map[string]os.FileMode{settings: 0o600, filepath.Dir(settings): 0o700, filepath.Dir(filepath.Dir(settings)): 0o700} {
		fi, err := os.Stat(path)
		must(t, err)
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
}

// TestHooksCopilotFile: --file puts the hook, with install's policy
// flags, in a repository's .github/hooks, leaving the user's hooks
// alone; uninstall takes it out again, and naming two agents is an
// error.
func TestHooksCopilotFile(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "home")
	file := filepath.Join(".github", "hooks", "fence.json")
	if code, _, errOut := fenceOut(t, "-t", "code", "hooks", "install", "--copilot", "--file", file); code != 0 {
		t.Fatalf("install --file: exit %d\n%s", code, errOut)
	}
	got := string(readOrNil(t, filepath.Join(dir, file)))
	if strings.Count(got, `"bash": "/usr/local/bin/fence hook copilot --template code"`) != 1 || !strings.Contains(got, `"version": 1`) {
		t.Errorf("%s holds:\n%s\nwant one entry with --template code, and the version", file, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "home", ".copilot")); err == nil {
		t.Error("install --file made ~/.copilot")
	}
	hooksRun(t, "copilot", "uninstall", "--file", file)
	if got := string(readOrNil(t, filepath.Join(dir, file))); strings.Contains(got, "fence") {
		t.Errorf("after uninstall %s holds:\n%s", file, got)
	}
	if code, _, _ := fenceOut(t, "hooks", "print", "--copilot", "--cursor"); code == 0 {
		t.Error("print --copilot --cursor succeeded")
	}
}

// TestIsFenceCopilotEntry: fence's and upstream's Copilot entries are
// found in every form Copilot runs (bash, command, exec with args),
// other entries, and fence's entries for other agents, are not.
func TestIsFenceCopilotEntry(t *testing.T) {
	for entry, want := range map[string]bool{
		`{"type": "command", "bash": "/usr/local/bin/fence hook copilot"}`:            true,
		`{"bash": "fence -t code hook copilot"}`:                                      true,
		`{"command": "/opt/x/fence --copilot-pre-tool-use"}`:                          true,
		`{"bash": "'/my dir/fence' hook copilot --settings /p"}`:                      true,
		`{"exec": "/usr/local/bin/fence", "args": ["hook", "copilot"]}`:               true,
		`{"exec": "fence", "args": ["--copilot-pre-tool-use"]}`:                       true,
		`{"type": "http", "url": "https://x/fence hook copilot"}`:                     false,
		`{"type": "prompt", "bash": "fence hook copilot"}`:                            false,
		`{"bash": "/usr/local/bin/fence hook cursor"}`:                                false,
		`{"bash": "fence -c 'fence hook copilot'"}`:                                   false,
		`{"bash": "fence hook copilot; rm -rf ~"}`:                                    false,
		`{"bash": "notfence hook copilot"}`:                                           false,
		`{"bash": "FOO=1 fence hook copilot"}`:                                        false,
		`{"bash": "/usr/local/bin/fence -- hook copilot"}`:                            false,
		`{"exec": "/usr/local/bin/fence", "args": ["-c", "hook copilot"]}`:            false,
		`{"exec": "/usr/local/bin/fence", "args": "hook copilot"}`:                    false,
		`{"exec": "/usr/local/bin/fence", "args": ["hook", 1]}`:                       false,
		`{"powershell": "fence hook copilot"}`:                                        false,
		`["fence", "hook", "copilot"]`:                                                false,
		`{"bash": ["fence hook copilot"]}`:                                            false,
		`{"bash": "/usr/local/bin/fence --command=x hook copilot"}`:                   false,
		`{"type": "command", "bash": "./guard.sh", "command": "fence hook copilot"}`:  false,
		`{"type": "command", "bash": "fence hook copilot", "command": "./guard.sh"}`:  true,
		`{"type": "command", "bash": "./scripts/audit.sh", "cwd": "fence hook copi"}`: false,
	} {
		v, err := hujson.Parse([]byte(entry))
		must(t, err)
		if got := isFenceCopilotEntry(v, "/usr/local/bin/fence"); got != want {
			t.Errorf("isFenceCopilotEntry(%s) = %v, want %v", entry, got, want)
		}
	}
}
