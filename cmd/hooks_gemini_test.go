package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// geminiHookCases are the Gemini CLI settings files under
// testdata/hooks/install-gemini/<name>, laid out as hookCases' are.
var geminiHookCases = []string{"nofile", "empty", "commented", "installed", "upstream", "oneline", "legacy", "parseerror", "notarray", "twice"}

// TestHooksInstallGemini installs, installs again, and uninstalls fence's
// Gemini CLI hook in each case's ~/.gemini/settings.json, comparing the
// diff print shows and each result with the golden files. A second
// install must leave the same bytes and no new backup; a refused file
// must be left as it was.
func TestHooksInstallGemini(t *testing.T) {
	for _, name := range geminiHookCases {
		t.Run(name, func(t *testing.T) {
			testOnlyFenceExe = "/usr/local/bin/fence"
			t.Cleanup(func() { testOnlyFenceExe = "" })
			dir, err := filepath.Abs(filepath.Join("testdata", "hooks", "install-gemini", name))
			must(t, err)
			home, settings := agentHome(t, "gemini", dir)
			code, out, errOut := fenceOut(t, "hooks", "print", "--gemini")
			if code != 0 {
				compareGolden(t, filepath.Join(dir, "error.golden"), []byte(strings.ReplaceAll(errOut, home, "$HOME")))
				if code, _, _ := fenceOut(t, "hooks", "install", "--gemini"); code == 0 {
					t.Fatal("install succeeded where print failed")
				}
				if code, _, _ := fenceOut(t, "hooks", "uninstall", "--gemini"); code == 0 {
					t.Fatal("uninstall succeeded where print failed")
				}
				compareFiles(t, filepath.Join(dir, "before.json"), settings)
				return
			}
			compareGolden(t, filepath.Join(dir, "print.diff"), []byte(strings.ReplaceAll(out, home, "$HOME")))
			hooksRun(t, "gemini", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			baks := backupCount(t, settings)
			if name == "installed" && baks != 0 {
				t.Errorf("install of a file holding the hook already made a backup")
			}
			hooksRun(t, "gemini", "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			if n := backupCount(t, settings); n != baks {
				t.Errorf("second install made a backup: %d, was %d", n, baks)
			}
			hooksRun(t, "gemini", "uninstall")
			compareGolden(t, filepath.Join(dir, "after-uninstall.json"), readOrNil(t, settings))
		})
	}
}

// TestHooksGeminiFlags: the hook entry carries install's policy flags,
// --file edits the project's file named, install says how Gemini comes
// to run hooks, and uninstall of a file without fence's hook changes
// nothing.
func TestHooksGeminiFlags(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "proj")
	file := filepath.Join(dir, "proj", ".gemini", "settings.json")
	code, _, errOut := fenceOut(t, "-t", "code", "hooks", "install", "--gemini", "--file", file)
	if code != 0 {
		t.Fatalf("install --file: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "tools.enableHooks") || strings.Contains(errOut, "warning") {
		t.Errorf("install said %q; want it to name tools.enableHooks, and no warning", errOut)
	}
	got := string(readOrNil(t, file))
	if strings.Count(got, `"/usr/local/bin/fence hook gemini --template code"`) != 1 {
		t.Errorf("settings.json holds:\n%s\nwant the entry with --template code once", got)
	}
	hooksRun(t, "gemini", "uninstall", "--file", file)
	before := readOrNil(t, file)
	code, _, errOut = fenceOut(t, "hooks", "uninstall", "--gemini", "--file", file)
	if code != 0 || !strings.Contains(errOut, "nothing changed") || string(readOrNil(t, file)) != string(before) {
		t.Errorf("second uninstall: exit %d, %q; want nothing changed", code, errOut)
	}
}

// TestGeminiMatcherIsJudged: the matcher Gemini is given, read as the
// regular expression Gemini reads it as, selects exactly the tools the
// hook judges, of every name the hook knows and some it does not.
func TestGeminiMatcherIsJudged(t *testing.T) {
	re := regexp.MustCompile(geminiMatcher)
	names := []string{"run_shell_command", "web_fetch", "read_many_files", "google_web_search", "save_memory", "mcp__fs__read_file", "read_file_x", "write_todos", ""}
	for name := range geminiFileTools {
		names = append(names, name)
	}
	for _, name := range names {
		if re.MatchString(name) != geminiJudged(name) {
			t.Errorf("%q: the matcher selects it %v, the hook judges it %v", name, re.MatchString(name), geminiJudged(name))
		}
	}
}

// TestIsFenceGeminiHook: fence's and upstream's Gemini entries are found,
// other commands and fence's entries for other agents are not.
func TestIsFenceGeminiHook(t *testing.T) {
	for command, want := range map[string]bool{
		"/usr/local/bin/fence hook gemini":             true,
		"fence -t code hook gemini":                    true,
		"/opt/x/fence --gemini-pre-tool-use":           true,
		"'/my dir/fence' hook gemini --settings /p":    true,
		"/usr/local/bin/fence hook claude":             false,
		"/usr/local/bin/fence hook cursor":             false,
		"fence -c 'fence hook gemini'":                 false,
		"fence hook gemini; rm -rf ~":                  false,
		"notfence hook gemini":                         false,
		"FOO=1 fence hook gemini":                      false,
		"/usr/local/bin/fence -- hook gemini":          false,
		"/usr/local/bin/fence --command=x hook gemini": false,
	} {
		if got := isFenceGeminiHook(command, "/usr/local/bin/fence"); got != want {
			t.Errorf("isFenceGeminiHook(%q) = %v, want %v", command, got, want)
		}
	}
}

// TestGeminiHooksOff: install warns when the settings would keep Gemini
// CLI from running fence's hook.
func TestGeminiHooksOff(t *testing.T) {
	for src, want := range map[string]string{
		`{"hooksConfig": {"enabled": false}}`:                                         "runs no hook",
		`{"hooks": {"enabled": false}}`:                                               "runs no hook",
		`{"hooksConfig": {"disabled": ["other", "fence"]}}`:                           "among the disabled",
		`{"hooks": {"disabled": ["fence"]}}`:                                          "among the disabled",
		`{"hooksConfig": {"enabled": true, "disabled": ["other"]}}`:                   "",
		`{"hooksConfig": {"disabled": ["/usr/local/bin/fence hook gemini -t code"]}}`: `lists "/usr/local/bin/fence hook gemini -t code" among the disabled`,
		`{"hooksConfig": {"disabled": ["fence -t code sh hook gemini"]}}`:             "",
		`{/* comment */ "model": {"name": "x"},}`:                                     "",
	} {
		if got := geminiHooksOff([]byte(src)); want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("geminiHooksOff(%s) = %q, want %q", src, got, want)
		}
	}
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "proj")
	file := filepath.Join(dir, "settings.json")
	must(t, os.WriteFile(file, []byte(`{"hooksConfig": {"enabled": false}}`), 0o600))
	code, _, errOut := fenceOut(t, "hooks", "install", "--gemini", "--file", file)
	if code != 0 || !strings.Contains(errOut, "fence: warning: "+file+": it sets hooks' enabled to false") {
		t.Errorf("install: exit %d\n%s\nwant a warning naming the file", code, errOut)
	}
	// Go's reader would merge the two, Gemini's keeps the last.
	dup := `{"hooksConfig": {"disabled": ["fence"], "disabled": []}}`
	must(t, os.WriteFile(file, []byte(dup), 0o600))
	for _, action := range []string{"install", "uninstall"} {
		code, _, errOut = fenceOut(t, "hooks", action, "--gemini", "--file", file)
		if code != 125 || !strings.Contains(errOut, file+`:1:41: "disabled" appears twice`) {
			t.Errorf("%s of %s: exit %d\n%s", action, dup, code, errOut)
		}
	}
	if got := string(readOrNil(t, file)); got != dup {
		t.Errorf("the file changed: %s", got)
	}
}
