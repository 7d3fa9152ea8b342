package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/sandbox"
)

// hookPolicy is the policy of the hook tests' workspace.
const hookPolicy = `{
  "command": {"deny": ["git push"]},
  "filesystem": {"denyRead": ["secret/**", "donn\u00e9es/**", "~/.ssh/**"], "allowWrite": ["."]},
  "network": {"allowedDomains": ["*.example.com"]}
}
`

// hookWorkspace makes the workspace the hook tests' events name: a
// policy, a secret, a link to it, a source file and a secret whose
// directory's name holds a composed letter (é, U+00E9).
func hookWorkspace(t testing.TB) string {
	must := func(_ testing.TB, err error) { mustTB(t, err) }
	// Not below /tmp: a hook refuses a policy file in a tree a template
	// makes writable (see hookPolicyFiles), and the code template shares
	// the host's /tmp.
	tmp, err := os.MkdirTemp("/var/tmp", "fence-hook-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir, err := filepath.EvalSymlinks(tmp)
	must(t, err)
	must(t, os.MkdirAll(dir+"/secret", 0o755))
	must(t, os.MkdirAll(dir+"/src", 0o755))
	must(t, os.WriteFile(dir+"/secret/key.pem", nil, 0o600))
	must(t, os.WriteFile(dir+"/src/main.go", nil, 0o644))
	must(t, os.MkdirAll(dir+"/donn\u00e9es", 0o755)) // a denied name with a composed letter
	must(t, os.WriteFile(dir+"/donn\u00e9es/k.txt", nil, 0o600))
	must(t, os.Symlink("secret/key.pem", dir+"/innocent"))
	must(t, os.WriteFile(dir+"/fence.jsonc", []byte(hookPolicy), 0o644))
	home := dir + "/home"
	must(t, os.MkdirAll(home+"/.ssh", 0o700))
	must(t, os.WriteFile(home+"/.ssh/id_rsa", nil, 0o600))
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	return dir
}

// runHook runs fence with args on the event and returns its stdout and
// stderr and exit status.
func runHook(t testing.TB, args []string, event []byte) (string, string, int) {
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr)
	root.SetIn(bytes.NewReader(event))
	root.SetArgs(hookAlias(args))
	code := report(root.Execute(), &stderr)
	return stdout.String(), stderr.String(), code
}

// TestHookClaude answers each event in testdata/hooks/claude (NAME.json,
// with $WORK the workspace and $FENCE the running fence) and compares
// the answer with NAME.out, rewritten under -update. Every answer comes
// with exit status 0 and nothing on stderr.
func TestHookClaude(t *testing.T) { hookGoldens(t, "claude", nil) }

// hookGoldens answers each event in testdata/hooks/AGENT (NAME.json, with
// $WORK the workspace and $FENCE the running fence) with the workspace's
// policy, and compares the answer with NAME.out, rewritten under
// -update. Every answer comes with exit status 0 and nothing on stderr;
// check, when not nil, holds what else the agent needs of an answer.
func hookGoldens(t *testing.T, agent string, check func(t *testing.T, out string)) {
	work := hookWorkspace(t)
	events, err := filepath.Glob(filepath.Join(testdata, "hooks", agent, "*.json"))
	must(t, err)
	if len(events) == 0 {
		t.Fatalf("no events in testdata/hooks/%s", agent)
	}
	fill := strings.NewReplacer("$WORK", work, "$FENCE", selfPath())
	unfill := strings.NewReplacer(work, "$WORK", selfPath(), "$FENCE")
	for _, ev := range events {
		name := strings.TrimSuffix(filepath.Base(ev), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(ev)
			must(t, err)
			out, errOut, code := runHook(t, []string{"hook", agent, "-s", work + "/fence.jsonc"}, []byte(fill.Replace(string(raw))))
			if code != 0 || errOut != "" {
				t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
			}
			if check != nil {
				check(t, out)
			}
			golden(t, "hooks/"+agent+"/"+name+".out", []byte(unfill.Replace(out)))
		})
	}
}

// TestHookClaudeEntryPoints: upstream's entry points answer as fence
// hook claude does.
func TestHookClaudeEntryPoints(t *testing.T) {
	work := hookWorkspace(t)
	event := []byte(`{"cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"git push"}}`)
	want, _, _ := runHook(t, []string{"hook", "claude", "-s", work + "/fence.jsonc"}, event)
	if !strings.Contains(want, `"permissionDecision":"deny"`) {
		t.Fatalf("fence hook claude answered %q, want a denial", want)
	}
	for _, args := range [][]string{
		{"--claude-pre-tool-use", "-s", work + "/fence.jsonc"},
		{"-s", work + "/fence.jsonc", "--claude-pre-tool-use"},
		{"hook", "--claude-pre-tool-use", "-s", work + "/fence.jsonc"},
	} {
		if got, errOut, code := runHook(t, args, event); got != want || code != 0 {
			t.Errorf("fence %q: exit %d, answer %q, stderr %q; want %q", args, code, got, errOut, want)
		}
	}
}

// TestHookAlias: only fence's own flags are rewritten, never a
// command's.
func TestHookAlias(t *testing.T) {
	for _, tt := range []struct{ args, want []string }{
		{[]string{"--claude-pre-tool-use"}, []string{"hook", "claude"}},
		{[]string{"-t", "code", "--claude-pre-tool-use"}, []string{"hook", "claude", "-t", "code"}},
		{[]string{"--", "prog", "--claude-pre-tool-use"}, []string{"--", "prog", "--claude-pre-tool-use"}},
		{[]string{"-c", "--claude-pre-tool-use"}, []string{"-c", "--claude-pre-tool-use"}},
		{[]string{"check", "command", "--claude-pre-tool-use"}, []string{"check", "command", "--claude-pre-tool-use"}},
	} {
		if got := hookAlias(tt.args); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("hookAlias(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestHookWrapRoundTrip: every command wrap makes is seen as wrapped,
// with the command it wrapped, and a change to it is not.
func TestHookWrapRoundTrip(t *testing.T) {
	o := &hookOptions{policy: &policyFlags{settings: "/p/fence.jsonc", template: "code"}}
	for _, c := range []string{"ls", "echo 'it''s' \"$HOME\"", "a'\\''b", "'", "", "x\ny"} {
		w := o.wrap("/bin/fence", "/w", c)
		if got, ok := o.unwrap("/bin/fence", "/w", w); !ok || got != c {
			t.Errorf("unwrap(wrap(%q)) = %q, %v", c, got, ok)
		}
		for _, changed := range []string{w + " ; rm -rf x", w + "'", "/bin/fence -t code -c " + singleQuote(c), "/bin/fence -t code --policy-dir /w -c " + singleQuote(c)} {
			if _, ok := o.unwrap("/bin/fence", "/w", changed); ok {
				t.Errorf("unwrap(%q) took it for a wrapped command", changed)
			}
		}
		if _, ok := o.unwrap("/bin/fence", "/elsewhere", w); ok {
			t.Errorf("unwrap took %q for a command wrapped for another directory", w)
		}
	}
}

// mustTB stops the test or benchmark on an error.
func mustTB(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHookClaudeAgreesWithCheck: for every file tool and path, the hook
// denies exactly what `fence check` denies, naming the same decision.
func TestHookClaudeAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	paths := []string{"src/main.go", "innocent", "secret", "SECRET/Key.pem", "fence.jsonc", ".bashrc", "missing/a/b", "/etc/hosts", "../x", "src/../secret/key.pem",
		"repo/.git/hooks/pre-commit", "repo/.git/config", "repo/main.go"}
	// A repository: writes to its control files are refused by what the
	// disk holds (the hook prepares only as much as the access needs).
	for _, d := range []string{"objects", "refs", "hooks"} {
		mustTB(t, os.MkdirAll(work+"/repo/.git/"+d, 0o755))
	}
	mustTB(t, os.WriteFile(work+"/repo/.git/HEAD", []byte("ref: refs/heads/main\n"), 0o644))
	mustTB(t, os.WriteFile(work+"/repo/.git/config", nil, 0o644))
	t.Chdir(work)
	for tool, ft := range claudeFileTools {
		for _, p := range paths {
			var checkOut, checkErr bytes.Buffer
			code := Main([]string{"-s", settings, "check", ft.access, p}, &checkOut, &checkErr)
			event := fmt.Sprintf(`{"cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{%q:%q}}`, work, tool, ft.field, p)
			out, _, _ := runHook(t, []string{"hook", "claude", "-s", settings}, []byte(event))
			line := strings.TrimSpace(checkOut.String())
			switch {
			case code == 0 && out != "":
				t.Errorf("%s %s: check allows (%s), the hook answers %s", tool, p, line, out)
			case code == 1 && !strings.Contains(out, `"deny"`):
				t.Errorf("%s %s: check denies (%s), the hook answers %q", tool, p, line, out)
			case code == 1 && !strings.Contains(out, strings.ReplaceAll(line, `"`, `\"`)):
				t.Errorf("%s %s: the hook's reason %s does not hold check's %s", tool, p, out, line)
			case code != 0 && code != 1:
				t.Errorf("%s %s: check exit %d: %s", tool, p, code, checkErr.String())
			}
		}
	}
}

// TestHookClaudeUntrusted: a discovered config the trust record does not
// vouch for denies every call fence judges, saying how to trust it, and
// leaves other tools alone.
func TestHookClaudeUntrusted(t *testing.T) {
	work := hookWorkspace(t)
	for tool, want := range map[string]string{"Bash": "fence config trust", "Read": "fence config trust", "Task": ""} {
		event := fmt.Sprintf(`{"cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{"command":"ls","file_path":"src/main.go"}}`, work, tool)
		out, _, code := runHook(t, []string{"hook", "claude"}, []byte(event))
		if code != 0 || want == "" && out != "" || want != "" && !(strings.Contains(out, `"deny"`) && strings.Contains(out, want)) {
			t.Errorf("%s: exit %d, answer %q; want a denial saying %q", tool, code, out, want)
		}
	}
}

// TestForeignFenceFlag: a fence command line's own policy flags are
// found, in every spelling, and a command that is not fence, or a fence
// without policy flags, has none.
func TestForeignFenceFlag(t *testing.T) {
	for command, want := range map[string]string{
		"fence -t code -c ls":                   "-t",
		"/usr/bin/fence --settings=/x -- ls":    "--settings=/x",
		"/bin/fence -ds p.jsonc -c ls":          "-ds",
		"fence --allow-write / -- sh":           "--allow-write",
		"fence --no-network -c 'curl x'":        "--no-network",
		"fence -c 'fence -t code ls' ":          "",
		"fence -m -- make -t target":            "",
		"fence check read x":                    "",
		"echo fence -t code":                    "",
		"FOO=1 /opt/x/fence --mode full -c ls":  "--mode",
		"fence -p 8080 -- server; fence -t x y": "-t",
		"make && /self/fence --deny-read=/ x":   "--deny-read=/",
		"((":                                    "",
		"'fence' -s ./open.json -c 'git push'":  "-s",
		`"/self/fence" -t x -c ls`:              "-t",
		"env FOO=1 fence --settings x -c ls":    "--settings",
		"command fence -t code -c ls":           "-t",
		"env -i fence -s x -- ls":               "-s",
		"$F -s x -c ls":                         "",
		"fence -c true -c 'git push' -s o.json": "-s",
		"fence -c '' -s o.json -- git push":     "-s",
		"fence -c '-s' -- ls":                   "",
	} {
		if got := foreignFenceFlag("/self/fence", command); got != want {
			t.Errorf("foreignFenceFlag(%q) = %q, want %q", command, got, want)
		}
	}
}

// TestHookPanicDenies: a hook that fails while judging (here: no policy
// flags at all, which no command line makes) denies the call in the
// agent's format rather than dying, which some agents take as a pass.
func TestHookPanicDenies(t *testing.T) {
	work := hookWorkspace(t)
	events := map[string]string{
		"claude":  `{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		"codex":   `{"hook_event_name":"PreToolUse","cwd":"` + work + `","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		"cursor":  `{"hook_event_name":"beforeShellExecution","cwd":"` + work + `","command":"ls"}`,
		"copilot": `{"timestamp":1,"cwd":"` + work + `","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`,
		"gemini":  `{"hook_event_name":"BeforeTool","cwd":"` + work + `","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
	}
	for agent := range hookRuntimes {
		if _, ok := events[agent]; !ok {
			t.Errorf("%s: no event in this test: every agent's hook must deny on a failure", agent)
		}
	}
	for agent, event := range events {
		var out bytes.Buffer
		if err := hookRuntimes[agent](&hookOptions{stderr: io.Discard}, []byte(event), nil, &out); err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		if !strings.Contains(out.String(), `"deny"`) || !strings.Contains(out.String(), "fence failed while judging") {
			t.Errorf("%s: answer %q, want a denial naming the failure", agent, out.String())
		}
	}
}

// TestHookCommandLineFails: a hook command line fence cannot answer (a
// flag it does not know, an agent it does not have, none named) exits 2,
// the status every supported agent takes as a refusal, saying why.
func TestHookCommandLineFails(t *testing.T) {
	hookWorkspace(t)
	for _, args := range [][]string{
		{"hook", "claude", "--no-such-flag"},
		{"hook", "gemini", "-t", "no-such-template", "--bogus"},
		{"hook", "nosuch"},
		{"hook"},
		{"--cursor-pre-tool-use", "--no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(args, &stdout, &stderr)
		if code != hookFailed || !strings.HasPrefix(stderr.String(), "fence: ") {
			t.Errorf("fence %q: exit %d, stderr %q; want %d and the reason", args, code, stderr.String(), hookFailed)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"check", "--no-such-flag"}, &stdout, &stderr); code == hookFailed {
		t.Errorf("fence check with a bad flag exits %d too: only the hook should", code)
	}
}

// TestFenceValueFlagsWhole: the preflight's list of fence's flags that
// take a value (by which it finds the command a nested fence runs) holds
// every such flag of the run.
func TestFenceValueFlagsWhole(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	check := func(f *pflag.Flag) {
		if f.Value.Type() == "bool" || f.Name == "command" {
			return
		}
		if !slices.Contains(sandbox.FenceValueFlags, "--"+f.Name) {
			t.Errorf("--%s takes a value but is not in sandbox.FenceValueFlags", f.Name)
		}
		if f.Shorthand != "" && !slices.Contains(sandbox.FenceValueFlags, "-"+f.Shorthand) {
			t.Errorf("-%s takes a value but is not in sandbox.FenceValueFlags", f.Shorthand)
		}
	}
	root.Flags().VisitAll(check)
	root.PersistentFlags().VisitAll(check)
}

// TestHookPolicyFileInWritableTree: a hook told to judge by a policy file
// a sandboxed run could have rewritten (here in /tmp, which the code
// template makes writable) denies every call it judges, saying so.
func TestHookPolicyFileInWritableTree(t *testing.T) {
	work := hookWorkspace(t)
	file := filepath.Join(t.TempDir(), "hook.jsonc")
	mustTB(t, os.WriteFile(file, []byte(hookPolicy), 0o644))
	event := `{"cwd":"` + work + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + work + `/src/main.go"}}`
	out, _, code := runHook(t, []string{"hook", "claude", "-s", file}, []byte(event))
	if code != 0 || !strings.Contains(out, `"deny"`) || !strings.Contains(out, "the hook's policy file "+file) {
		t.Errorf("exit %d, answer %s; want a denial naming the file", code, out)
	}
}
