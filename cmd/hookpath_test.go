package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestAgentSpellings: a path comes back as written, trimmed of
// JavaScript's whitespace, with "~" taken as home and in NFC, and
// nothing else.
func TestAgentSpellings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"/w/a", []string{"/w/a"}},
		{"~", []string{"~", "/h"}},
		{"~/.ssh/id_rsa", []string{"~/.ssh/id_rsa", "/h/.ssh/id_rsa"}},
		{"~//etc/x", []string{"~//etc/x", "/h/etc/x"}},
		{"~user/x", []string{"~user/x"}},
		{" /w/a\t", []string{" /w/a\t", "/w/a"}},
		{"\u00a0\ufeff~/k\u3000\u2028", []string{"\u00a0\ufeff~/k\u3000\u2028", "~/k", "/h/k"}},
		{"\u0085/w/a", []string{"\u0085/w/a"}}, // not whitespace to JavaScript
		{" ", []string{" ", "."}},
		{"donne\u0301es/k", []string{"donne\u0301es/k", "donn\u00e9es/k"}},
		{" ~/donne\u0301es", []string{" ~/donne\u0301es", "~/donne\u0301es", "/h/donne\u0301es", " ~/donn\u00e9es", "~/donn\u00e9es", "/h/donn\u00e9es"}},
	} {
		if got := agentSpellings(c.in, "/h"); !slices.Equal(got, c.want) {
			t.Errorf("agentSpellings(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := agentSpellings("~/x", ""); !slices.Equal(got, []string{"~/x"}) {
		t.Errorf("without a home: %q", got)
	}
}

// TestJudgeSpellings: a path is refused when any spelling of it is, and
// the refusal names the rule; a path no spelling of which is refused is
// judged as written.
func TestJudgeSpellings(t *testing.T) {
	dir := t.TempDir() // an allowWrite rule for a missing directory allows nothing
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{
		DenyRead: []string{"~/.ssh/**", "donn\u00e9es/**"}, AllowWrite: []string{"."}, DenyWrite: []string{"~/.profile"},
	}}, policy.Env{Dir: dir, Home: "/h"})
	res := newResolver(dir)
	for _, c := range []struct {
		access, path string
		allowed      bool
		pattern      string
	}{
		{"read", "~/.ssh/id_rsa", false, "~/.ssh/**"},
		{"read", " /h/.ssh/id_rsa", false, "~/.ssh/**"},
		{"read", "donne\u0301es/k", false, "donn\u00e9es/**"},
		{"write", "~/.profile", false, "~/.profile"},
		{"write", "~/notes", false, ""}, // outside allowWrite "." once expanded
		{"read", "src/main.go", true, "."},
		{"write", "src/main.go", true, "."},
	} {
		d, err := judgeSpellings(pol, res, c.access, c.path)
		if err != nil {
			t.Fatal(err)
		}
		pattern := ""
		if d.Pattern != nil {
			pattern = *d.Pattern
		}
		if d.Allowed != c.allowed || pattern != c.pattern {
			t.Errorf("%s %q: allowed %v by %s %q, want %v by %q", c.access, c.path, d.Allowed, d.Rule, pattern, c.allowed, c.pattern)
		}
	}
}

// TestRecursiveRefusal: a recursive read is refused when a denyRead rule
// may match at or below its root, by its fixed leading directory, case
// folded, and through a glob that reaches below the root; it is allowed
// beside or above what a rule may match.
func TestRecursiveRefusal(t *testing.T) {
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{
		DenyRead: []string{"secret/**", "/w/keys/*.pem", "/w/deep/**/id_*", "~/.aws"},
	}}, policy.Env{Dir: "/w", Home: "/h"})
	res := newResolver("/w")
	for _, c := range []struct {
		root string
		rule string // "" for allowed
	}{
		{"/w", "secret/**"},
		{".", "secret/**"},
		{"/", "secret/**"},
		{"/W/SECRET/..", "secret/**"}, // deny rules fold case: /W may be /w
		{"/w/src", ""},
		{"/w/keys", "/w/keys/*.pem"},
		{"/w/keys/sub", ""}, // *.pem matches only what lies in keys itself
		{"/w/deep/a/b", "/w/deep/**/id_*"},
		{"/w/KEYS", "/w/keys/*.pem"}, // deny rules fold case
		{"~", "~/.aws"},
		{" /h ", "~/.aws"},
		{"/h/src", ""},
	} {
		reason, err := recursiveRefusal(pol, res, c.root)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.rule == "" && reason != "":
			t.Errorf("%q: refused (%s), want allowed", c.root, reason)
		case c.rule != "" && !strings.Contains(reason, `"`+c.rule+`"`):
			t.Errorf("%q: %q, want a refusal naming %q", c.root, reason, c.rule)
		}
	}
}

// TestGlobMayMatchBelow: the rest of a glob may match below a path when
// its segments match the path's and some are left, or one is "**".
func TestGlobMayMatchBelow(t *testing.T) {
	for _, c := range []struct {
		rest, rel string
		want      bool
	}{
		{"*.pem", "", true},
		{"*.pem", "a.pem", true},
		{"*.pem", "sub", false},
		{"*/key.pem", "sub", true},
		{"*/key.pem", "sub/x", false},
		{"**/key.pem", "a/b/c", true},
		{"{a,b}/x", "c", true},
		{"[", "a", true},
	} {
		if got := globMayMatchBelow(c.rest, c.rel); got != c.want {
			t.Errorf("globMayMatchBelow(%q, %q) = %v, want %v", c.rest, c.rel, got, c.want)
		}
	}
}

// TestRecursiveRefusalPrivateTmp: with no denyRead rule, a recursive
// read of a directory holding /tmp (which `fence check read` refuses:
// sandbox.privateTmp) is refused through every agent's search tool, and
// allowed once the policy lets the host's /tmp be read.
func TestRecursiveRefusalPrivateTmp(t *testing.T) {
	work := hookWorkspace(t)
	open, tmpOpen := work+"/open.json", work+"/tmp-open.json"
	must(t, os.WriteFile(open, []byte(`{}`), 0o644))
	must(t, os.WriteFile(tmpOpen, []byte(`{"filesystem":{"allowRead":["/tmp"]}}`), 0o644))
	events := map[string]string{
		"claude":  `{"hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Grep","tool_input":{"pattern":"x","path":%q}}`,
		"gemini":  `{"hook_event_name":"BeforeTool","cwd":%q,"tool_name":"grep_search","tool_input":{"pattern":"x","dir_path":%q}}`,
		"copilot": "", // toolArgs is a string holding JSON
	}
	for agent, format := range events {
		for _, c := range []struct {
			settings, root string
			deny           bool
		}{
			{open, "/", true},
			{open, "/var/..", true},
			{open, " /", true},
			{open, "/tmp", true},
			{open, "/usr", false},
			{open, work + "/src", false},
			{tmpOpen, "/", false},
		} {
			if agent != "claude" && !c.deny && !strings.HasPrefix(c.root, work) {
				continue // their searches also walk the tree for links, past the budget on these (TestHookGeminiSearchThroughLinks)
			}
			event := fmt.Sprintf(format, work, c.root)
			if agent == "copilot" {
				args, _ := json.Marshal(map[string]string{"pattern": "x", "path": c.root})
				event = fmt.Sprintf(`{"timestamp":1,"cwd":%q,"toolName":"grep","toolArgs":%q}`, work, args)
			}
			out, errOut, code := runHook(t, []string{"hook", agent, "-s", c.settings}, []byte(event))
			denied := strings.Contains(out, "sandbox.privateTmp")
			if code != 0 || denied != c.deny || !c.deny && out != "" {
				t.Errorf("%s search of %q under %s: exit %d, answer %q, stderr %q; want denied %v naming sandbox.privateTmp", agent, c.root, filepath.Base(c.settings), code, out, errOut, c.deny)
			}
		}
	}
}
