package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestImportClaudeGolden runs `fence import --claude --file` on each
// testdata/import/<case> settings file (settings.json, or
// .claude/settings.json where "/path" rules need a project) and compares
// stdout with fence.jsonc and stderr with stderr.golden. The case's
// absolute directory prints as $CASE. Whatever prints on stdout must load
// with the policy loader.
func TestImportClaudeGolden(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", "/usr/bin:/bin")
	cases, err := os.ReadDir(filepath.Join("testdata", "import"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", "import", c.Name())
			file := filepath.Join(dir, "settings.json")
			if _, err := os.Stat(file); err != nil {
				file = filepath.Join(dir, ".claude", "settings.json")
			}
			var stdout, stderr bytes.Buffer
			code := Main([]string{"import", "--claude", "--file", file}, &stdout, &stderr)
			abs, err := filepath.Abs(dir)
			if err != nil {
				t.Fatal(err)
			}
			out := strings.ReplaceAll(stdout.String(), abs, "$CASE")
			errText := strings.ReplaceAll(stderr.String(), abs, "$CASE")
			compareGolden(t, filepath.Join(dir, "fence.jsonc"), []byte(out))
			compareGolden(t, filepath.Join(dir, "stderr.golden"), []byte(errText))
			if stdout.Len() == 0 {
				if code != sandbox.ExitFenceError {
					t.Errorf("exit %d with nothing printed, want %d", code, sandbox.ExitFenceError)
				}
				return
			}
			if code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			loadImportedFile(t, stdout.Bytes())
		})
	}
}

// loadImportedFile writes text as a fence.jsonc and loads it with the policy
// loader, from disk, as a run with -s would.
func loadImportedFile(t *testing.T, text []byte) *policy.Resolved {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "fence.jsonc")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := policy.Load(policy.Options{Settings: file, Dir: dir, Home: dir, UserConfigDir: filepath.Join(dir, "config")})
	if err != nil {
		t.Fatalf("the imported config does not load: %v\n%s", err, text)
	}
	return res
}

// TestImportClaudeTranslation checks single rules against the config
// they give, after loading.
func TestImportClaudeTranslation(t *testing.T) {
	tests := []struct {
		list, rule, key, want string
	}{
		{"deny", "Bash(npm run test:*)", "command.deny", "npm run test"},
		{"deny", "Bash(git push)", "command.deny", "git push"},
		{"deny", "Bash(  git   push  *)", "command.deny", "git push"},
		{"deny", "Bash(sudo:*)", "command.deny", "sudo"},
		{"deny", "Bash(python*)", "command.deny", "python*"},
		{"deny", "Read(./secrets/**)", "filesystem.denyRead", "secrets/**"},
		{"deny", "Read(*.env)", "filesystem.denyRead", "**/*.env"},
		{"deny", "Read(//home/u/.ssh/)", "filesystem.denyRead", "/home/u/.ssh"},
		{"allow", "Read(//)", "filesystem.allowRead", "/"},
		{"deny", "Edit(/)", "filesystem.denyWrite", "/proj"},
		{"deny", "Edit(./)", "filesystem.denyWrite", "."},
		{"deny", "Edit(~/)", "filesystem.denyWrite", "~"},
		{"deny", "Edit(/a/../../x)", "filesystem.denyWrite", "/x"},
		{"allow", "Read(~/src/**)", "filesystem.allowRead", "~/src/**"},
		{"deny", "Edit(/src/**)", "filesystem.denyWrite", "/proj/src/**"},
		{"allow", "Edit(src/**)", "filesystem.allowWrite", "src/**"},
		{"allow", "WebFetch(domain:example.com)", "network.allowedDomains", "example.com"},
		{"deny", "WebFetch(domain:evil.example)", "network.deniedDomains", "evil.example"},
		{"deny", "WebFetch", "network.deniedDomains", "*"},
		{"allow", "Bash(npm run test:*)", "", ""},
		{"ask", "Bash(ls)", "", ""},
		{"deny", "Bash(git * main)", "", ""},
		{"deny", "Read(!x)", "", ""},
		{"allow", "Edit", "", ""},
		{"deny", "WebFetch(domain:a.example/path)", "", ""},
	}
	for _, tt := range tests {
		imp := &imported{keys: map[string][]importEntry{}}
		imp.add(tt.list, tt.rule, "/proj")
		if tt.key == "" {
			if len(imp.skipped) != 1 || len(imp.keys) != 0 {
				t.Errorf("%s %s: got %v, skipped %v; want it not imported", tt.list, tt.rule, imp.keys, imp.skipped)
			}
			continue
		}
		res := loadImportedFile(t, imp.render("settings.json"))
		got := configValues(res.Config, tt.key)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s %s: %s = %q, want [%q] (skipped %v)", tt.list, tt.rule, tt.key, got, tt.want, imp.skipped)
		}
	}
}

// TestImportClaudeUserAnchor: in the user's own settings, Claude Code
// anchors "/path" at the project it runs in, so the fence rule is
// relative (to each run's working directory), not below $HOME.
func TestImportClaudeUserAnchor(t *testing.T) {
	for rule, want := range map[string]string{"Read(/secrets/**)": "secrets/**", "Edit(/)": ".", "Edit(/a/../b)": "b", "Read(//abs/x)": "/abs/x"} {
		imp := &imported{keys: map[string][]importEntry{}}
		imp.add("deny", rule, "")
		key := "filesystem.denyRead"
		if strings.HasPrefix(rule, "Edit") {
			key = "filesystem.denyWrite"
		}
		res := loadImportedFile(t, imp.render("settings.json"))
		if got := configValues(res.Config, key); len(got) != 1 || got[0] != want {
			t.Errorf("%s from the user's settings: %s = %q, want [%q]", rule, key, got, want)
		}
	}
	dir := workIn(t, "home")
	must(t, os.MkdirAll(filepath.Join(dir, "home", ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "home", ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Read(/secrets/**)"]}}`), 0o600))
	code, out, errOut := fenceOut(t, "import", "--claude")
	if code != 0 || !strings.Contains(out, `"secrets/**"`) || strings.Contains(out, filepath.Join(dir, "home", "secrets")) {
		t.Errorf("fence import --claude: exit %d\n%s\n%s\nwant secrets/** relative", code, out, errOut)
	}
}

// configValues is the list under key in c.
func configValues(c policy.Config, key string) []string {
	return map[string][]string{
		"command.deny":           c.Command.Deny,
		"filesystem.allowRead":   c.Filesystem.AllowRead,
		"filesystem.denyRead":    c.Filesystem.DenyRead,
		"filesystem.allowWrite":  c.Filesystem.AllowWrite,
		"filesystem.denyWrite":   c.Filesystem.DenyWrite,
		"network.allowedDomains": c.Network.AllowedDomains,
		"network.deniedDomains":  c.Network.DeniedDomains,
	}[key]
}

// TestImportClaudeWrite reads the default ~/.claude/settings.json, writes
// with -o, and checks that the file is what would print, that fence
// trusts it as its own write when it is discovered, that a second write
// refuses to replace it, and that --force does.
func TestImportClaudeWrite(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions": {"deny": ["Bash(git push:*)", "Read(.env)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(home, "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	var printed, stderr bytes.Buffer
	if code := Main([]string{"import", "--claude"}, &printed, &stderr); code != 0 {
		t.Fatalf("import printing: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := Main([]string{"import", "--claude", "-o", "fence.jsonc"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("import -o: exit %d: %s", code, stderr.String())
	}
	target := filepath.Join(project, "fence.jsonc")
	written, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, printed.Bytes()) {
		t.Errorf("-o wrote:\n%s\nwant what import prints:\n%s", written, printed.Bytes())
	}
	if !strings.Contains(stderr.String(), "fence: trusted "+target) {
		t.Errorf("stderr does not say the file is trusted:\n%s", stderr.String())
	}
	checkDiscoveredTrusted(t)

	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := Main([]string{"import", "--claude", "-o", "fence.jsonc"}, &bytes.Buffer{}, &stderr); code != sandbox.ExitFenceError || !strings.Contains(stderr.String(), "already exists: use --force") {
		t.Errorf("import -o over a file: exit %d, stderr:\n%s\nwant a refusal naming --force", code, stderr.String())
	}
	if b, _ := os.ReadFile(target); string(b) != "{}\n" {
		t.Errorf("the refused import changed the file to:\n%s", b)
	}
	if code := Main([]string{"import", "--claude", "-o", "fence.jsonc", "--force"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("import -o --force: exit %d", code)
	}
	if b, _ := os.ReadFile(target); !bytes.Equal(b, printed.Bytes()) {
		t.Errorf("--force wrote:\n%s", b)
	}
	checkDiscoveredTrusted(t)

	// Rules from a project's settings, which a sandboxed command may have
	// written, are written but not vouched for.
	projectSettings := filepath.Join(project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(projectSettings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(projectSettings, []byte(`{"permissions": {"allow": ["Edit(//**)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := Main([]string{"import", "--claude", "--file", projectSettings, "-o", "fence.jsonc", "--force"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("import --file -o: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "fence: not trusted: its rules come from "+projectSettings) || strings.Contains(stderr.String(), "fence: trusted") {
		t.Errorf("stderr does not say the import from a project's settings is not trusted:\n%s", stderr.String())
	}
	if _, _, err := (&policyFlags{stderr: &bytes.Buffer{}}).load(); err == nil {
		t.Errorf("a config imported from a project's settings loads as trusted")
	}
}

// checkDiscoveredTrusted loads the config of the working directory as a
// run would, which refuses an untrusted file, and checks its rules.
func checkDiscoveredTrusted(t *testing.T) {
	t.Helper()
	res, _, err := (&policyFlags{stderr: &bytes.Buffer{}}).load()
	if err != nil {
		t.Fatalf("load the imported config: %v", err)
	}
	if got := res.Config.Command.Deny; len(got) != 1 || got[0] != "git push" {
		t.Errorf("command.deny = %q, want [\"git push\"]", got)
	}
	if got := res.Config.Filesystem.DenyRead; len(got) != 1 || got[0] != "**/.env" {
		t.Errorf("filesystem.denyRead = %q, want [\"**/.env\"]", got)
	}
}

// TestImportClaudeFlags checks the refusals of the command line, with a
// valid ~/.claude/settings.json so that only the flags are at fault.
func TestImportClaudeFlags(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Bash(git push)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"import", "--claude"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("import --claude: exit %d, want 0", code)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "say whose settings to import: --claude"},
		{[]string{"import", "--claude", "-t", "code"}, "policy flags do not apply to import"},
		{[]string{"import", "--claude", "--deny-read", "/x"}, "policy flags do not apply to import"},
		{[]string{"import", "--claude", "--file", filepath.Join(home, "missing.json")}, "read Claude Code settings: "},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(c.args, &stdout, &stderr)
		if code != sandbox.ExitFenceError || !strings.HasPrefix(stderr.String(), "fence: error: "+c.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want an error %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
}

// TestImportClaudeMeaning imports rules and asks `fence check` about the
// result, so that what a rule meant in Claude Code is what fence decides.
func TestImportClaudeMeaning(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	work := t.TempDir()
	t.Chdir(work)
	settings := filepath.Join(work, "settings.json")
	rules := `{"permissions": {
		"allow": ["Edit(src/**)", "WebFetch(domain:*.example.com)", "Bash(npm run deploy --dry-run)"],
		"deny": ["Bash(npm run deploy:*)", "Bash(curl *)", "Read(.env)", "Read(./secrets/**)", "Edit(src/generated/)", "WebFetch(domain:evil.example.com)"]
	}}`
	if err := os.WriteFile(settings, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	if code := Main([]string{"import", "--claude", "--file", settings}, &out, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	config := filepath.Join(work, "imported.jsonc")
	if err := os.WriteFile(config, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query []string
		want  int // 0 allowed, 1 denied
	}{
		{[]string{"command", "npm run deploy --prod"}, 1},
		{[]string{"command", "npm run deploy --dry-run"}, 1}, // a Claude Code deny beats its allow
		{[]string{"command", "npm run test"}, 0},
		{[]string{"command", "curl https://example.com"}, 1},
		{[]string{"read", "sub/dir/.env"}, 1},
		{[]string{"read", "secrets/key"}, 1},
		{[]string{"read", "README"}, 0},
		{[]string{"write", "src/main.go"}, 0},
		{[]string{"write", "src/generated/x.go"}, 1},
		{[]string{"url", "https://api.example.com/x"}, 0},
		{[]string{"url", "https://evil.example.com/x"}, 1}, // denied although *.example.com is allowed
	} {
		var stdout, errb bytes.Buffer
		code := Main(append([]string{"-s", config, "check"}, c.query...), &stdout, &errb)
		if code != c.want {
			t.Errorf("fence check %q = exit %d, want %d\n%s%s", c.query, code, c.want, stdout.String(), errb.String())
		}
	}
}

// TestImportClaudeRenderOneLine checks that a file name or rule with a
// line break stays inside its comment: the output loads and holds only
// the one entry.
func TestImportClaudeRenderOneLine(t *testing.T) {
	imp := &imported{keys: map[string][]importEntry{}}
	imp.add("deny", "Read(x\n\"filesystem\": {\"allowWrite\": [\"/\"]})", "/proj")
	imp.add("deny", "Bash(git\npush)", "/proj")
	res := loadImportedFile(t, imp.render("a\n{\"filesystem\": {\"allowWrite\": [\"/\"]}}\n//"))
	if got := res.Config.Filesystem.AllowWrite; len(got) != 0 {
		t.Errorf("allowWrite = %q, want none", got)
	}
}
