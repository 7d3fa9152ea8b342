package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHookGemini answers each event in testdata/hooks/gemini (NAME.json,
// written from Gemini CLI's hooks reference and tools pages, with $WORK
// the workspace and $FENCE the running fence) and compares the answer
// with NAME.out, rewritten under -update. Every answer comes with exit
// status 0 and nothing on stderr: Gemini runs the tool after a hook that
// exits otherwise.
func TestHookGemini(t *testing.T) {
	hookGoldens(t, "gemini", func(t *testing.T, out string) {
		if out != "" && !json.Valid([]byte(out)) {
			t.Errorf("the answer %q is not one JSON value", out)
		}
	})
}

// TestHookGeminiRewrite: the rewritten command is this fence running
// the original command, quotes and all, and the hook lets it through as
// wrapped already when it comes back.
func TestHookGeminiRewrite(t *testing.T) {
	work := hookWorkspace(t)
	command := `printf '%s\n' "it's" $HOME`
	event := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"run_shell_command","tool_input":{"command":%q}}`, work, command)
	out, _, _ := runHook(t, []string{"hook", "gemini", "-s", work + "/fence.jsonc"}, []byte(event))
	var ans geminiAnswer
	must(t, json.Unmarshal([]byte(out), &ans))
	if ans.HookSpecificOutput == nil || ans.Decision != "" {
		t.Fatalf("answer %s: want a rewrite and no decision", out)
	}
	var wrapped string
	must(t, json.Unmarshal(ans.HookSpecificOutput.ToolInput["command"], &wrapped))
	o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc"}}
	if inner, ok := o.unwrap(selfPath(), work, wrapped); !ok || inner != command {
		t.Errorf("rewritten to %q, which wraps %q (%v); want %q", wrapped, inner, ok, command)
	}
	again := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"run_shell_command","tool_input":{"command":%q}}`, work, wrapped)
	if out, _, _ := runHook(t, []string{"hook", "gemini", "-s", work + "/fence.jsonc"}, []byte(again)); out != "" {
		t.Errorf("the wrapped command is answered %s; want nothing (not wrapped twice)", out)
	}
}

// TestHookGeminiEntryPoints: upstream's entry point answers as fence
// hook gemini does.
func TestHookGeminiEntryPoints(t *testing.T) {
	work := hookWorkspace(t)
	event := []byte(`{"hook_event_name":"BeforeTool","cwd":"` + work + `","tool_name":"run_shell_command","tool_input":{"command":"git push"}}`)
	want, _, _ := runHook(t, []string{"hook", "gemini", "-s", work + "/fence.jsonc"}, event)
	if !strings.Contains(want, `"decision":"deny"`) {
		t.Fatalf("fence hook gemini answered %q, want a denial", want)
	}
	for _, args := range [][]string{
		{"--gemini-pre-tool-use", "-s", work + "/fence.jsonc"},
		{"-s", work + "/fence.jsonc", "--gemini-pre-tool-use"},
		{"hook", "--gemini-pre-tool-use", "-s", work + "/fence.jsonc"},
	} {
		if got, errOut, code := runHook(t, args, event); got != want || code != 0 {
			t.Errorf("fence %q: exit %d, answer %q, stderr %q; want %q", args, code, got, errOut, want)
		}
	}
	if got, _, code := runHook(t, []string{"hook", "gemini", "--claude-pre-tool-use"}, event); code == 0 || got != "" {
		t.Errorf("two agents: exit %d, answer %q; want an error and no answer", code, got)
	}
}

// TestHookGeminiAgreesWithCheck: for every path, each file tool denies
// exactly what `fence check` denies for its access, naming the same
// decision.
func TestHookGeminiAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	paths := []string{"src/main.go", "innocent", "secret", "SECRET/Key.pem", "fence.jsonc", "missing/a/b", "/etc/hosts", "../x", "src/../secret/key.pem", ".git/config"}
	tools := []struct{ tool, field, access string }{
		{"read_file", "file_path", "read"}, {"list_directory", "dir_path", "read"}, {"glob", "dir_path", "read"},
		{"grep_search", "dir_path", "read"}, {"write_file", "file_path", "write"}, {"replace", "file_path", "write"},
	}
	t.Chdir(work)
	for _, tl := range tools {
		for _, p := range paths {
			var checkOut, checkErr bytes.Buffer
			code := Main([]string{"-s", settings, "check", tl.access, p}, &checkOut, &checkErr)
			event := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":%q,"tool_input":{%q:%q,"pattern":"x"}}`, work, tl.tool, tl.field, p)
			out, _, _ := runHook(t, []string{"hook", "gemini", "-s", settings}, []byte(event))
			line := strings.TrimSpace(checkOut.String())
			switch {
			case code == 0 && out != "":
				t.Errorf("%s %s: check allows (%s), the hook answers %s", tl.tool, p, line, out)
			case code == 1 && !strings.Contains(out, `"decision":"deny"`):
				t.Errorf("%s %s: check denies (%s), the hook answers %q", tl.tool, p, line, out)
			case code == 1 && !strings.Contains(out, strings.ReplaceAll(line, `"`, `\"`)):
				t.Errorf("%s %s: the hook's reason %s does not hold check's %s", tl.tool, p, out, line)
			case code != 0 && code != 1:
				t.Errorf("%s %s: check exit %d: %s", tl.tool, p, code, checkErr.String())
			}
		}
	}
}

// TestHookGeminiFetchAgreesWithCheck: a web_fetch of one URL is denied
// exactly when `fence check url` denies the address it reaches.
func TestHookGeminiFetchAgreesWithCheck(t *testing.T) {
	work := hookWorkspace(t)
	settings := work + "/fence.jsonc"
	for _, u := range []string{"https://docs.example.com/a", "http://example.com/", "https://evil.test/", "http://api.example.com:8080/x", "https://127.0.0.1/"} {
		code := Main([]string{"-s", settings, "check", "url", u}, io.Discard, io.Discard)
		event := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"web_fetch","tool_input":{"prompt":"Summarize %s"}}`, work, u)
		out, _, _ := runHook(t, []string{"hook", "gemini", "-s", settings}, []byte(event))
		if denied := strings.Contains(out, `"decision":"deny"`); denied != (code == 1) || code > 1 {
			t.Errorf("%s: check exit %d, the hook answers %q", u, code, out)
		}
	}
}

// TestPromptURLs: the URLs fence finds in a web_fetch prompt, and the
// host it reads each one as reaching.
func TestPromptURLs(t *testing.T) {
	for _, c := range []struct {
		prompt string
		want   []string // fetchTarget of each, "!" for refused
	}{
		{"see https://a.example.com/x, then HTTP://B.example.com", []string{"https://a.example.com/", "http://b.example.com/"}},
		{"(https://a.example.com)", []string{"https://a.example.com/"}},
		{"https:a.example.com https:/\\b.example.com", []string{"https://a.example.com/", "https://b.example.com/"}},
		{"https://u:p@a.example.com:8443/x", []string{"https://a.example.com:8443/"}},
		{"https://a.example.com\\@b.example.com/", []string{"https://a.example.com/"}},
		{"https://a.example.com)@b.example.com/ https://a.example.com)b.example.com/", []string{"https://b.example.com/", "!"}},
		{"https://a.example.com./", []string{"https://a.example.com/"}},
		{"http://0x7f.1/ http://017700000001/ http://127.1/", []string{"http://127.0.0.1/", "http://127.0.0.1/", "http://127.0.0.1/"}},
		{"http://256.1.1.1/ http://1.2.3.4.5/", []string{"!", "!"}},
		{"https://%65vil.test/ https://ex\u00e4mple.com/ https://a.example.com:x/", []string{"!", "!", "!"}},
		{"https://[::1]:8080/", []string{"https://[::1]:8080/"}},
		{"https://github.com/o/r/blob/main/f.go", []string{"https://github.com/", "https://raw.githubusercontent.com/"}},
		{"https://a.example.com/?u=https://b.example.com", []string{"https://a.example.com/", "https://b.example.com/"}},
		{"no url, only https: and https://", []string{"", ""}},
		{"https://evil.test\u00a0@a.example.com/", []string{"https://evil.test/"}},
		{"https://evil.test\u3000@a.example.com/ https://evil.test\u2028@a.example.com/ https://evil.test\ufeff@a.example.com/", []string{"https://evil.test/", "https://evil.test/", "https://evil.test/"}},
		{"https://evil.test\u2003@a.example.com/ https://evil.test\u205f@a.example.com/ https://evil.test\u1680@a.example.com/", []string{"https://evil.test/", "https://evil.test/", "https://evil.test/"}},
		{"https://evil.test\u200b@a.example.com/ https://a.example.com\u00e9/", []string{"!", "!"}},
		{"https://a.example.com/caf\u00e9\u00a0https://b.example.com/", []string{"https://a.example.com/", "https://b.example.com/"}},
	} {
		var got []string
		for _, u := range promptURLs(c.prompt) {
			target, err := fetchTarget(u)
			if err != nil {
				target = "!"
			}
			got = append(got, target)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.prompt, got, c.want)
		}
	}
}

// TestGlobRoot: the fixed leading directories of a glob.
func TestGlobRoot(t *testing.T) {
	for glob, want := range map[string]string{
		"src/**/*.go": "src", "**/*.go": ".", "*.md": ".", "/etc/*": "/etc", "/*": "/",
		"secret/key.pem": "secret/key.pem", "a/b[0-9]/c": "a", `a/\*x`: "a", "a/{b,c}/d": "a", "../up/*": "../up",
	} {
		if got := globRoot(glob); got != want {
			t.Errorf("globRoot(%q) = %q, want %q", glob, got, want)
		}
	}
}

// BenchmarkHookGemini measures one Gemini CLI hook decision in process,
// as BenchmarkHookClaude does for Claude Code: a shell call rewritten, a
// file read judged, a fetch judged.
func BenchmarkHookGemini(b *testing.B) {
	work := hookWorkspace(b)
	event := func(tool, input string) string {
		return `{"session_id":"s","cwd":"` + work + `","hook_event_name":"BeforeTool","tool_name":"` + tool + `","tool_input":` + input + `}`
	}
	for _, bb := range []struct{ name, event string }{
		{"run_shell_command", event("run_shell_command", `{"command":"go test ./... && git status | head -5"}`)},
		{"read_file", event("read_file", `{"file_path":"`+work+`/innocent"}`)},
		{"web_fetch", event("web_fetch", `{"prompt":"Summarize https://docs.example.com/a and https://evil.test/b"}`)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			o := &hookOptions{policy: &policyFlags{settings: work + "/fence.jsonc", stderr: io.Discard}, stderr: io.Discard}
			event := []byte(bb.event)
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := o.gemini(event, nil, io.Discard); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// TestHookGeminiReadManyThroughLinks: a read_many_files glob whose
// wildcard goes through a link in the workspace into a denied tree (a
// link the model can make with a wrapped shell call) is denied in every
// spelling Gemini globs it, backslashes as separators included; a glob
// that matches no denied file is still allowed, and a walk past its
// budget is denied.
func TestHookGeminiReadManyThroughLinks(t *testing.T) {
	work := hookWorkspace(t)
	must(t, os.Symlink("../secret", work+"/src/lnk2"))
	run := func(include string) string {
		event := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"read_many_files","tool_input":{"include":[%q]}}`, work, include)
		out, errOut, code := runHook(t, []string{"hook", "gemini", "-s", work + "/fence.jsonc"}, []byte(event))
		if code != 0 || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", include, code, errOut)
		}
		return out
	}
	for _, include := range []string{"src/*/key.pem", "src/**/key.pem", "src/*/*", "src/lnk*/key.pem", "src/l?k2/key.pem", `src/lnk2\key.pem`, `src\*\key.pem`, "src/LNK2/*.PEM", "src/{lnk2,x}/key.pem", work + "/src/*/key.pem", "src/*/../x"} {
		if out := run(include); !strings.Contains(out, `"decision":"deny"`) || !strings.Contains(out, "fence: denied") {
			t.Errorf("%s: answered %q; want a denial naming the rule", include, out)
		}
	}
	for _, include := range []string{"src/**/*.go", "src/*.go", "src/main.go"} {
		if out := run(include); out != "" {
			t.Errorf("%s: answered %q; want nothing (allowed)", include, out)
		}
	}
	defer func(n int) { maxGlobEntries = n }(maxGlobEntries)
	maxGlobEntries = 3
	for i := range 5 {
		must(t, os.WriteFile(fmt.Sprintf("%s/src/f%d.go", work, i), nil, 0o644))
	}
	if out := run("src/**/*.go"); !strings.Contains(out, "budget") {
		t.Errorf("a walk past its budget: answered %q; want a denial naming the budget", out)
	}
}

// BenchmarkHookGeminiSearchWalk: a grep_search of this repository
// without an include, which walks and judges every file below it.
func BenchmarkHookGeminiSearchWalk(b *testing.B) {
	work := hookWorkspace(b)
	mustTB(b, os.WriteFile(work+"/open.json", []byte(`{"filesystem":{"denyRead":["~/.ssh/**"]}}`), 0o644))
	repo, err := filepath.Abs("..")
	mustTB(b, err)
	event := []byte(fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"grep_search","tool_input":{"pattern":"x","dir_path":%q}}`, repo, repo))
	for b.Loop() {
		if out, _, _ := runHook(b, []string{"hook", "gemini", "-s", work + "/open.json"}, event); out != "" {
			b.Fatalf("answered %s", out)
		}
	}
}

// TestHookGeminiSearchThroughLinks: a grep_search whose tree holds a
// link into a denied tree is denied, whatever its include (its glob
// fallback goes through links), a tree without one is allowed, and a
// walk past its budget is denied.
func TestHookGeminiSearchThroughLinks(t *testing.T) {
	work := hookWorkspace(t)
	must(t, os.MkdirAll(work+"/lib/deep", 0o755))
	must(t, os.WriteFile(work+"/lib/deep/a.go", nil, 0o644))
	must(t, os.Symlink("../../src", work+"/lib/deep/up")) // a link within the workspace
	must(t, os.Symlink("../../secret", work+"/src/lnk2"))
	must(t, os.MkdirAll(work+"/src/inner", 0o755))
	must(t, os.Symlink("../../secret/key.pem", work+"/src/inner/key"))
	run := func(dir, include string) string {
		event := fmt.Sprintf(`{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"grep_search","tool_input":{"pattern":"x","dir_path":%q,"include_pattern":%q}}`, work, dir, include)
		out, errOut, code := runHook(t, []string{"hook", "gemini", "-s", work + "/fence.jsonc"}, []byte(event))
		if code != 0 || errOut != "" {
			t.Errorf("%s %s: exit %d, stderr %q; want 0 and nothing", dir, include, code, errOut)
		}
		return out
	}
	for _, c := range []struct {
		dir, include string
		deny         bool
	}{
		{"src", "", true},
		{"src", "*.go", true},
		{"src/inner", "", true}, // a link to a denied file
		{"lib", "", true},       // through lib/deep/up into src
		{"lib/deep", "*.go", true},
	} {
		if out := run(c.dir, c.include); strings.Contains(out, `"decision":"deny"`) != c.deny || c.deny && !strings.Contains(out, "secret/**") {
			t.Errorf("grep_search of %s (include %q): answered %q; want denied %v naming the rule", c.dir, c.include, out, c.deny)
		}
	}
	must(t, os.Remove(work+"/src/lnk2"))
	must(t, os.Remove(work+"/src/inner/key"))
	must(t, os.Symlink("../lib", work+"/src/back")) // a loop: lib/deep/up/back is lib
	for _, dir := range []string{"src", "lib", "lib/deep"} {
		if out := run(dir, ""); out != "" {
			t.Errorf("grep_search of %s without a link out: answered %q; want nothing (allowed)", dir, out)
		}
	}
	defer func(n int) { maxLinkWalkEntries = n }(maxLinkWalkEntries)
	maxLinkWalkEntries = 3
	if out := run("lib", ""); !strings.Contains(out, "budget") {
		t.Errorf("a walk past its budget: answered %q; want a denial naming the budget", out)
	}
}
