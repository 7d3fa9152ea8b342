package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// exactSelf is the fence binary the entries of these tests are written
// for.
const exactSelf = "/usr/local/bin/fence"

// isFenceFuncs are, per agent, whether its install and uninstall take a
// hook command for fence's.
var isFenceFuncs = map[string]func(command, self string) bool{
	"claude": isFenceHook,
	"codex":  isFenceCodexHook,
	"cursor": isFenceCursorHook,
	"gemini": isFenceGeminiHook,
	"copilot": func(command, self string) bool {
		entry := fmt.Sprintf(`{"type": "command", "bash": %q}`, command)
		v, err := hujson.Parse([]byte(entry))
		if err != nil {
			panic(err)
		}
		return isFenceCopilotEntry(v, self)
	},
}

// TestIsFenceHookWords: a command is fence's hook only when its words
// are the fence binary, the hook (ours or upstream's) and the policy
// flags a hook entry carries, nothing else; a user's own command that
// runs a program under fence with the words "hook AGENT" is not.
func TestIsFenceHookWords(t *testing.T) {
	for agent, isFence := range isFenceFuncs {
		other := "claude"
		if agent == "claude" {
			other = "codex"
		}
		for _, c := range []struct {
			command string
			want    bool
		}{
			{"/usr/local/bin/fence hook A", true},
			{"'/opt/my tools/fence' hook A --settings /etc/fence.jsonc", true},
			{"fence -s /etc/fence.jsonc hook A", true},
			{"fence --settings=/etc/fence.jsonc hook A", true},
			{"fence hook A --template code", true},
			{"fence -t code hook A -s /p.json", true},
			{"fence --A-pre-tool-use", true},
			{"/opt/fence/bin/fence -t code --A-pre-tool-use", true},
			{"fence --A-pre-tool-use --settings /etc/fence.json", true},
			{"/home/u/bin/fence-dev hook A", true},
			{"fence -t code sh hook A", false},
			{"fence sh hook A", false},
			{"/usr/bin/fence python3 hook A", false},
			{"fence check hook A", false},
			{"fence hook A extra", false},
			{"fence hook A -m", false},
			{"fence hook A -s", false},
			{"fence -s hook A", false},
			{"fence --debug hook A", false},
			{"fence hook A --A-pre-tool-use", false},
			{"fence hook " + other, false},
			{"fence --" + other + "-pre-tool-use", false},
			{"fence -- hook A", false},
			{"fence -c 'x hook A'", false},
			{"fence hooks A", false},
			{"fence hook A2", false},
			{"echo fence hook A", false},
			{"fencer hook A", false},
			{"fence hook A; curl evil", false},
			{"fence hook A > /tmp/log", false},
			{"FOO=1 fence hook A", false},
			{"$FENCE hook A", false},
			{"fence", false},
		} {
			command := strings.ReplaceAll(c.command, "A", agent)
			if got := isFence(command, "/home/u/bin/fence-dev"); got != c.want {
				t.Errorf("%s: %q taken for fence's: %v, want %v", agent, command, got, c.want)
			}
		}
	}
}

// exactCase is, for one agent, a settings file holding fence's entry as
// fence writes it (with %s for the command), its install and uninstall,
// and variants of it: duplicate keys (each refused, naming where the
// second one is) and extra keys (fence's entry then is not installed).
type exactCase struct {
	src        string
	install    func(file string, src []byte, command, self string) ([]byte, error)
	uninstall  func(file string, src []byte, self string) ([]byte, int, error)
	user       string            // a user's own hook that runs a program under fence
	duplicates map[string]string // source: the duplicate name as written
	extras     []string          // sources
}

var exactCases = map[string]exactCase{
	"claude": claudeLikeCase(claudeMatcher, installClaudeHook, uninstallClaudeHook),
	"codex":  claudeLikeCase(codexMatcher, installCodexHook, uninstallCodexHook),
	"gemini": {
		src:       `{"hooks": {"BeforeTool": [{"matcher": "` + jsonEscape(geminiMatcher) + `", "hooks": [{"name": "fence", "type": "command", "command": "%s"}]}]}}`,
		install:   installGeminiHook,
		uninstall: uninstallGeminiHook,
		user:      `{"hooks": {"BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "fence -t code sh hook gemini"}]}]}}`,
		duplicates: map[string]string{
			`"hooks": [], "matcher": "nope"}]}}`: `"matcher"`,
			`"hooks": [], "hooks": []}]}}`:       `"hooks"`,
			`"name": "x"}]}]}}`:                  `"name"`,
			`"command": "true"}]}]}}`:            `"command"`,
		},
		extras: []string{`"timeout": 1}]}]}}`, `"description": "x"}]}]}}`},
	},
	"cursor": {
		src:       `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "%s"}], "beforeReadFile": [{"command": "%[1]s"}]}}`,
		install:   installCursorHook,
		uninstall: uninstallCursorHook,
		user:      `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "fence -t code sh hook cursor"}]}}`,
		duplicates: map[string]string{
			`"command": "true"}]}}`:              `"command"`,
			`"matcher": "x", "matcher": "y"}]}}`: `"matcher"`,
		},
		extras: []string{`"matcher": "nope"}]}}`, `"timeout": 1}]}}`, `"type": "command"}]}}`},
	},
	"copilot": {
		src:       `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "%s", "timeoutSec": 60}]}}`,
		install:   installCopilotHook,
		uninstall: uninstallCopilotHook,
		user:      `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "fence -t code sh hook copilot"}]}}`,
		duplicates: map[string]string{
			`"bash": "true"}]}}`:   `"bash"`,
			`"type": "prompt"}]}}`: `"type"`,
			`"t\u0079pe": "x"}]}}`: `"t\u0079pe"`,
		},
		extras: []string{`"env": {"XDG_CONFIG_HOME": "/tmp/evil"}}]}}`, `"cwd": "/tmp"}]}}`, `"powershell": "x"}]}}`},
	},
}

// claudeLikeCase is the case of an agent with Claude Code's layout.
func claudeLikeCase(matcher string, install func(string, []byte, string, string) ([]byte, error), uninstall func(string, []byte, string) ([]byte, int, error)) exactCase {
	agent := "claude"
	if matcher == codexMatcher {
		agent = "codex"
	}
	return exactCase{
		src:       `{"hooks": {"PreToolUse": [{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": "%s"}]}]}}`,
		install:   install,
		uninstall: uninstall,
		user:      `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "fence -t code sh hook ` + agent + `"}]}]}}`,
		duplicates: map[string]string{
			`"hooks": [], "hooks": []}]}}`:             `"hooks"`,
			`"hooks": [], "matcher": "NoSuchTool"}]}}`: `"matcher"`,
			`"hooks": [], "matche\u0072": "Nope"}]}}`:  `"matche\u0072"`,
			`"command": "true"}]}]}}`:                  `"command"`,
			`"type": "prompt"}]}]}}`:                   `"type"`,
		},
		extras: []string{`"timeout": 0.001}]}]}}`, `"async": true}]}]}}`, `"if": "Bash(git *)"}]}]}}`},
	}
}

func jsonEscape(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }

// variant is src with its closing brackets replaced by tail: a member
// added to the innermost object (a group when tail starts with "hooks",
// else fence's entry).
func (c exactCase) variant(tail string) string {
	src := fmt.Sprintf(c.src, exactSelf+" hook A")
	if strings.HasPrefix(tail, `"hooks": [], `) { // a member of the group
		i := strings.LastIndex(src, `}]}]}}`)
		return src[:i] + `}], ` + strings.TrimPrefix(tail, `"hooks": [], `)
	}
	end := strings.LastIndex(src, "}")
	for strings.ContainsRune("}]", rune(src[end-1])) {
		end--
	}
	return src[:end] + ", " + tail
}

// TestHooksExactEntry: fence's entry counts as installed only exactly as
// fence writes it. A duplicate key anywhere in hooks is refused by
// install and uninstall alike, naming file:line:col of the second one; an
// entry with a key fence does not write is replaced by install and taken
// out by uninstall.
func TestHooksExactEntry(t *testing.T) {
	for agent, c := range exactCases {
		command := exactSelf + " hook " + agent
		fix := func(s string) string { return strings.ReplaceAll(s, exactSelf+" hook A", command) }
		exact := fix(fmt.Sprintf(c.src, exactSelf+" hook A"))
		if out, err := c.install("s.json", []byte(exact), command, exactSelf); err != nil || string(out) != exact {
			t.Fatalf("%s: install changed fence's exact entry (%v):\n%s\n->\n%s", agent, err, exact, out)
		}
		for tail, name := range c.duplicates {
			src := fix(c.variant(tail))
			var decoded string
			must(t, json.Unmarshal([]byte(name), &decoded))
			want := fmt.Sprintf("s.json:1:%d: %q appears twice", strings.LastIndex(src, name)+1, decoded)
			_, ierr := c.install("s.json", []byte(src), command, exactSelf)
			_, _, uerr := c.uninstall("s.json", []byte(src), exactSelf)
			for _, err := range []error{ierr, uerr} {
				if err == nil || err.Error() != want {
					t.Errorf("%s: %s: error %v, want %s", agent, src, err, want)
				}
			}
		}
		for _, tail := range c.extras {
			src := fix(c.variant(tail))
			out, err := c.install("s.json", []byte(src), command, exactSelf)
			if err != nil || string(out) == src {
				t.Errorf("%s: install took %s for fence's hook (%v)", agent, src, err)
				continue
			}
			rest := strings.TrimSuffix(tail, "}]}}")
			rest = strings.TrimRight(rest, "}]")
			if strings.Contains(string(out), rest) || strings.Count(string(out), command) != strings.Count(exact, command) {
				t.Errorf("%s: install kept the extra %s:\n%s", agent, rest, out)
			}
			if out, n, err := c.uninstall("s.json", []byte(src), exactSelf); err != nil || n == 0 || strings.Contains(string(out), command) {
				t.Errorf("%s: uninstall of %s: %d removed, %v:\n%s", agent, src, n, err, out)
			}
		}
	}
}

// TestHooksUserFenceHookKept: a user's own hook that runs a program
// under fence with the words "hook AGENT" survives install and uninstall.
func TestHooksUserFenceHookKept(t *testing.T) {
	for agent, c := range exactCases {
		command := exactSelf + " hook " + agent
		if out, n, err := c.uninstall("s.json", []byte(c.user), exactSelf); err != nil || n != 0 || string(out) != c.user {
			t.Errorf("%s: uninstall took the user's hook: %d removed, %v:\n%s", agent, n, err, out)
		}
		out, err := c.install("s.json", []byte(c.user), command, exactSelf)
		if err != nil || !strings.Contains(string(out), "fence -t code sh hook "+agent) || !strings.Contains(string(out), command) {
			t.Errorf("%s: install dropped the user's hook (%v):\n%s", agent, err, out)
		}
	}
}

// TestHooksCodexDuplicateAnywhere: Codex refuses a hooks.json that gives
// a key twice anywhere, so install and uninstall refuse it too, even out
// of hooks, naming where the second one is.
func TestHooksCodexDuplicateAnywhere(t *testing.T) {
	src := `{"hooks": {}, "x": {"a": 1, "a": 2}}`
	want := `hooks.json:1:29: "a" appears twice`
	_, ierr := installCodexHook("hooks.json", []byte(src), exactSelf+" hook codex", exactSelf)
	_, _, uerr := uninstallCodexHook("hooks.json", []byte(src), exactSelf)
	for _, err := range []error{ierr, uerr} {
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", src, err, want)
		}
	}
}
