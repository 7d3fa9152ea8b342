package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookCase is one settings file that fence hooks install and uninstall
// edit, under testdata/hooks/install/<name>: before.json (none: no file),
// and the golden print.diff, after-install.json and after-uninstall.json,
// or error.golden when fence refuses the file.
type hookCase struct {
	name string
	link bool // the settings path is a link to the file
}

var hookCases = []hookCase{
	{name: "nofile"},
	{name: "empty"},
	{name: "blank"},
	{name: "commented"},
	{name: "installed"},
	{name: "upstream"},
	{name: "parseerror"},
	{name: "symlink", link: true},
}

// TestHooksInstallClaude installs, installs again, and uninstalls fence's
// Claude Code hook in each case's file, comparing the diff print shows
// and each result with the golden files. A second install must leave the
// same bytes and no new backup; a refused file must be left as it was.
func TestHooksInstallClaude(t *testing.T) {
	for _, c := range hookCases {
		t.Run(c.name, func(t *testing.T) {
			testOnlyFenceExe = "/usr/local/bin/fence"
			t.Cleanup(func() { testOnlyFenceExe = "" })
			dir, err := filepath.Abs(filepath.Join("testdata", "hooks", "install", c.name))
			must(t, err)
			home, settings, target := hookHome(t, c, dir)
			code, out, errOut := fenceOut(t, "hooks", "print", "--claude")
			if code != 0 {
				compareGolden(t, filepath.Join(dir, "error.golden"), []byte(strings.ReplaceAll(errOut, home, "$HOME")))
				compareFiles(t, filepath.Join(dir, "before.json"), target)
				if code, _, _ := fenceOut(t, "hooks", "install", "--claude"); code == 0 {
					t.Fatal("install succeeded where print failed")
				}
				compareFiles(t, filepath.Join(dir, "before.json"), target)
				return
			}
			compareGolden(t, filepath.Join(dir, "print.diff"), []byte(strings.ReplaceAll(out, home, "$HOME")))
			if _, err := os.Stat(settings); c.name == "nofile" && err == nil {
				t.Fatal("print wrote the file")
			}
			hookRun(t, "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			checkMode(t, c, settings)
			baks := backupCount(t, settings)
			if before := readOrNil(t, target); c.name == "installed" && baks != 0 {
				t.Errorf("install of a file holding the hook already made a backup; file now:\n%s", before)
			}
			hookRun(t, "install")
			compareGolden(t, filepath.Join(dir, "after-install.json"), readOrNil(t, settings))
			if n := backupCount(t, settings); n != baks {
				t.Errorf("second install made a backup: %d, was %d", n, baks)
			}
			hookRun(t, "uninstall")
			compareGolden(t, filepath.Join(dir, "after-uninstall.json"), readOrNil(t, settings))
		})
	}
}

// hookHome makes HOME with the case's settings file in ~/.claude (or a
// link there to it); it returns HOME, the settings path and the file the
// content is in.
func hookHome(t *testing.T, c hookCase, dir string) (home, settings, target string) {
	home = workIn(t, "home")
	home = filepath.Join(home, "home")
	settings = filepath.Join(home, ".claude", "settings.json")
	before, err := os.ReadFile(filepath.Join(dir, "before.json"))
	if os.IsNotExist(err) {
		return home, settings, settings
	}
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(settings), 0o700))
	target = settings
	if c.link {
		target = filepath.Join(home, "dotfiles", "settings.json")
		must(t, os.MkdirAll(filepath.Dir(target), 0o755))
		must(t, os.Symlink("../dotfiles/settings.json", settings))
	}
	must(t, os.WriteFile(target, before, 0o640))
	return home, settings, target
}

func hookRun(t *testing.T, action string) {
	t.Helper()
	if code, _, stderr := fenceOut(t, "hooks", action, "--claude"); code != 0 {
		t.Fatalf("%s: exit %d\n%s", action, code, stderr)
	}
}

// checkMode wants a file install made to be 0600 in a 0700 directory,
// and an edited one to keep its mode.
func checkMode(t *testing.T, c hookCase, settings string) {
	t.Helper()
	fi, err := os.Stat(settings)
	must(t, err)
	want := os.FileMode(0o640)
	if c.name == "nofile" {
		want = 0o600
		di, err := os.Stat(filepath.Dir(settings))
		must(t, err)
		if di.Mode().Perm() != 0o700 {
			t.Errorf("made %s with mode %v, want 0700", filepath.Dir(settings), di.Mode().Perm())
		}
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s has mode %v, want %v", settings, fi.Mode().Perm(), want)
	}
}

func backupCount(t *testing.T, path string) int {
	t.Helper()
	b, err := backups(path)
	must(t, err)
	return len(b)
}

func fenceOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func readOrNil(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	return b
}

// compareFiles wants path to hold what want holds.
func compareFiles(t *testing.T, want, path string) {
	t.Helper()
	w, err := os.ReadFile(want)
	must(t, err)
	if got := readOrNil(t, path); !bytes.Equal(got, w) {
		t.Errorf("%s changed:\n%s\nwant\n%s", path, got, w)
	}
}

// compareGolden compares got with the golden file, or rewrites it with
// -update.
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		must(t, os.WriteFile(golden, got, 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}

// TestIsFenceHook recognises fence's entries, ours and upstream's, by the
// command's words, not by a substring.
func TestIsFenceHook(t *testing.T) {
	const self = "/home/u/bin/fence-dev"
	for _, c := range []struct {
		command string
		want    bool
	}{
		{"/usr/local/bin/fence hook claude", true},
		{"'/opt/my tools/fence' hook claude --settings /etc/fence.jsonc", true},
		{"fence -s /etc/fence.jsonc hook claude", true},
		{"fence --claude-pre-tool-use", true},
		{"/nix/store/x/bin/fence --claude-pre-tool-use --settings p.json", true},
		{"/home/u/bin/fence-dev hook claude", true},
		{"fence hook codex", false},
		{"fence -c 'x hook claude'", false},
		{"fence -- tool hook claude", false},
		{"echo fence hook claude", false},
		{"fence hook claude > /tmp/log", false},
		{"fence hook claude; rm -rf ~", false},
		{"$FENCE hook claude", false},
		{"fencer hook claude", false},
		{"fence", false},
		{"fence hook 'claude", false},
	} {
		if got := isFenceHook(c.command, self); got != c.want {
			t.Errorf("isFenceHook(%q) = %v, want %v", c.command, got, c.want)
		}
	}
}

// TestHooksSettingsRefused: settings fence cannot edit faithfully are
// refused naming file:line:col, whichever way fence was to edit them.
func TestHooksSettingsRefused(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{`[]`, "s.json:1:1: want an object at the top level"},
		{`{"hooks": []}`, "s.json:1:11: hooks: want an object"},
		{"{\n \"hooks\": {\"PreToolUse\": {}}}", "s.json:2:26: hooks.PreToolUse: want an array"},
		{`{"hooks": {}, "hooks": {}}`, `s.json:1:15: "hooks" appears twice`},
		{`{"hooks": {"PreToolUse": [], "PreToolUse": []}}`, `s.json:1:30: "PreToolUse" appears twice`},
		{`{"hooks": `, "s.json:1:11: invalid JSONC: parsing value: unexpected EOF"},
	} {
		_, ierr := installClaudeHook("s.json", []byte(c.src), "fence hook claude", "fence")
		_, _, uerr := uninstallClaudeHook("s.json", []byte(c.src), "fence")
		for _, err := range []error{ierr, uerr} {
			if err == nil || err.Error() != c.want {
				t.Errorf("edit %s: error %v, want %s", c.src, err, c.want)
			}
		}
	}
}

// TestHooksInstallFlags: --file edits a project's settings (making
// .claude), the policy flags given to install reach the hook's command
// (a settings file made absolute), and rule flags the hook could not
// carry are refused with nothing written.
func TestHooksInstallFlags(t *testing.T) {
	testOnlyFenceExe = "/opt/fence tools/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	tmp := workIn(t, "home")
	must(t, os.WriteFile("fence.jsonc", []byte("{}\n"), 0o644))
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude", "-s", "fence.jsonc"); code != 125 || !strings.Contains(stderr, "lies in /tmp") {
		t.Errorf("install with a policy file in /tmp: exit %d\n%s\nwant it refused, as the hook would refuse every call", code, stderr)
	}
	// Outside the trees a sandbox could write, as a hook's policy must be.
	dir, err := os.MkdirTemp("/var/tmp", "fence-hooks-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	must(t, os.WriteFile("fence.jsonc", []byte("{}\n"), 0o644))
	project := filepath.Join(".claude", "settings.json")
	if code, _, stderr := fenceOut(t, "hooks", "install", "--claude", "--file", project, "-s", "fence.jsonc"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, stderr)
	}
	got := string(readOrNil(t, project))
	want := `"command": "'/opt/fence tools/fence' hook claude --settings ` + filepath.Join(dir, "fence.jsonc") + `"`
	if !strings.Contains(got, want) {
		t.Errorf("project settings:\n%s\nwant a hook with %s", got, want)
	}
	if di, err := os.Stat(".claude"); err != nil || di.Mode().Perm() != 0o755 {
		t.Errorf("made .claude: %v, %v; want mode 0755", di, err)
	}
	if code, _, _ := fenceOut(t, "hooks", "install", "--claude", "--file", project, "-t", "code"); code != 0 {
		t.Fatal("install -t code failed")
	}
	if got := string(readOrNil(t, project)); !strings.Contains(got, `hook claude --template code"`) || strings.Count(got, "hook claude") != 1 {
		t.Errorf("after install -t code, want one hook, with --template code:\n%s", got)
	}
	before := readOrNil(t, project)
	for _, args := range [][]string{
		{"--allow-read", "/"},
		{"--no-network"},
		{"-s", "missing.jsonc"},
		{"-s", "fence.jsonc", "-t", "code"},
		{}, // no agent
	} {
		full := append([]string{"hooks", "install", "--file", project}, args...)
		if len(args) > 0 {
			full = append(full, "--claude")
		}
		if code, _, stderr := fenceOut(t, full...); code == 0 {
			t.Errorf("fence %q succeeded:\n%s", full, stderr)
		}
		if got := readOrNil(t, project); !bytes.Equal(got, before) {
			t.Errorf("fence %q wrote the file:\n%s", full, got)
		}
	}
}

// TestHooksLinkedDirectory: a link among the directories on the way to
// the settings file is followed and said; the file is edited where it
// lies, and the link is left a link.
func TestHooksLinkedDirectory(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	dir := workIn(t, "home")
	must(t, os.MkdirAll(filepath.Join(dir, "dotfiles", "claude"), 0o700))
	must(t, os.MkdirAll(filepath.Join(dir, "home"), 0o700))
	must(t, os.Symlink("../dotfiles/claude", filepath.Join(dir, "home", ".claude")))
	code, _, stderr := fenceOut(t, "hooks", "install", "--claude")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s", code, stderr)
	}
	real := filepath.Join(dir, "dotfiles", "claude", "settings.json")
	if !strings.Contains(stderr, "is "+real+" (a directory on the way is a link)") {
		t.Errorf("install did not say where it wrote:\n%s", stderr)
	}
	if !strings.Contains(string(readOrNil(t, real)), "/usr/local/bin/fence hook claude") {
		t.Errorf("%s lacks the hook", real)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "home", ".claude")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("~/.claude is no longer a link: %v %v", fi, err)
	}
}

// TestHooksDisabled: a file that turns every hook off is named, since
// fence's hook would not run.
func TestHooksDisabled(t *testing.T) {
	for src, want := range map[string]bool{
		`{"disableAllHooks": true}`:  true,
		`{"disableAllHooks": false}`: false,
		`{"disableAllHooks": 1}`:     true,
		`{"model": "opus"}`:          false,
	} {
		if got := hooksDisabled([]byte(src)); got != want {
			t.Errorf("hooksDisabled(%s) = %v, want %v", src, got, want)
		}
	}
}

// TestHooksAgentHomeMoved: an agent whose directory a variable moves
// (CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME, GEMINI_CLI_HOME) gets its hook where it
// reads it, said on stderr; a relative value is refused, nothing written.
func TestHooksAgentHomeMoved(t *testing.T) {
	testOnlyFenceExe = "/usr/local/bin/fence"
	t.Cleanup(func() { testOnlyFenceExe = "" })
	for agent, v := range agentHomeEnv {
		t.Run(agent, func(t *testing.T) {
			dir := workIn(t, "home")
			moved := filepath.Join(dir, "elsewhere")
			t.Setenv(v, moved)
			code, _, stderr := fenceOut(t, "hooks", "install", "--"+agent)
			if code != 0 {
				t.Fatalf("install: exit %d\n%s", code, stderr)
			}
			rest := hooksAgents[agent].userFile[1:]
			if agent == "gemini" { // GEMINI_CLI_HOME holds .gemini
				rest = hooksAgents[agent].userFile
			}
			want := filepath.Join(append([]string{moved}, rest...)...)
			if !strings.Contains(string(readOrNil(t, want)), "/usr/local/bin/fence hook "+agent) {
				t.Errorf("%s lacks the hook; stderr:\n%s", want, stderr)
			}
			if !strings.Contains(stderr, v+" is set: editing "+want) {
				t.Errorf("install did not say it followed %s:\n%s", v, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "home")); err == nil {
				t.Errorf("install wrote below the home directory too")
			}
			t.Setenv(v, "relative/dir")
			code, _, stderr = fenceOut(t, "hooks", "install", "--"+agent)
			if code == 0 || !strings.Contains(stderr, "not an absolute path") {
				t.Errorf("a relative %s: exit %d\n%s", v, code, stderr)
			}
		})
	}
}

// agentHome makes a home whose agent settings file (the agent's user
// file, its directory variable unset) holds dir's before.json, when
// there is one, and returns the home and that file.
func agentHome(t *testing.T, agent, dir string) (home, settings string) {
	t.Helper()
	home = filepath.Join(workIn(t, "home"), "home")
	if v := agentHomeEnv[agent]; v != "" {
		t.Setenv(v, "")
	}
	settings = filepath.Join(append([]string{home}, hooksAgents[agent].userFile...)...)
	before, err := os.ReadFile(filepath.Join(dir, "before.json"))
	if os.IsNotExist(err) {
		return home, settings
	}
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(settings), 0o700))
	must(t, os.WriteFile(settings, before, 0o640))
	return home, settings
}

// hooksRun runs fence hooks ACTION --AGENT with args, which must succeed.
func hooksRun(t *testing.T, agent, action string, args ...string) {
	t.Helper()
	if code, _, stderr := fenceOut(t, append([]string{"hooks", action, "--" + agent}, args...)...); code != 0 {
		t.Fatalf("%s: exit %d\n%s", action, code, stderr)
	}
}
