package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

func init() { hookRuntimes["claude"] = (*hookOptions).claude }

// claudeEvent is the part of a Claude Code hook event fence reads.
type claudeEvent struct {
	HookEventName string                     `json:"hook_event_name"`
	ToolName      string                     `json:"tool_name"`
	ToolInput     map[string]json.RawMessage `json:"tool_input"`
	Cwd           string                     `json:"cwd"`
}

// claudeAnswer is a PreToolUse hook's answer: hookSpecificOutput with a
// permission decision, its reason, and the rewritten tool input.
type claudeAnswer struct {
	HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
}

type claudeDecision struct {
	HookEventName            string                     `json:"hookEventName"`
	PermissionDecision       string                     `json:"permissionDecision"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]json.RawMessage `json:"updatedInput,omitempty"`
}

// claudeFileTools are Claude Code's file tools, the access each needs,
// the input field naming the path, whether the path may be left out
// (the event's cwd then), and whether the tool reads the contents of
// every file below it (see recursiveRefusal). Grep's glob and type
// fields only narrow what it searches below its path, so they are not
// read. NotebookRead is the notebook reader of older releases (its
// notebook_path, as the tool's own description gives it).
var claudeFileTools = map[string]struct {
	access, field       string
	optional, recursive bool
}{
	"Read":         {"read", "file_path", false, false},
	"NotebookRead": {"read", "notebook_path", false, false},
	"Glob":         {"read", "path", true, false},
	"Grep":         {"read", "path", true, true},
	"LS":           {"read", "path", true, false},
	"Write":        {"write", "file_path", false, false},
	"Edit":         {"write", "file_path", false, false},
	"MultiEdit":    {"write", "file_path", false, false},
	"NotebookEdit": {"write", "notebook_path", false, false},
}

// claudeJudged reports whether fence judges calls of the tool.
func claudeJudged(tool string) bool {
	_, file := claudeFileTools[tool]
	return file || tool == "Bash" || tool == "WebFetch"
}

// claude answers one Claude Code PreToolUse event. It writes nothing
// where Claude Code's own permission flow is to decide: a tool fence
// does not judge, a file or fetch call the policy allows.
func (o *hookOptions) claude(raw []byte, rerr error, stdout io.Writer) error {
	ans, err := guarded(func() (*claudeDecision, error) { return o.claudeDecide(raw, rerr) })
	return writeDecision(stdout, ans, err)
}

// writeDecision writes a PreToolUse answer in Claude Code's format (which
// Codex reads too): ans, or a denial for err; nothing for neither.
func writeDecision(stdout io.Writer, ans *claudeDecision, err error) error {
	if err != nil {
		ans = &claudeDecision{PermissionDecision: "deny", PermissionDecisionReason: "fence: " + err.Error()}
	}
	if ans == nil {
		return nil
	}
	ans.HookEventName = "PreToolUse"
	return writeAnswer(stdout, claudeAnswer{*ans}, true)
}

// claudeDecide is the answer to the event, nil for none; an error denies
// the call (fail closed).
func (o *hookOptions) claudeDecide(raw []byte, rerr error) (*claudeDecision, error) {
	if rerr != nil {
		return nil, rerr
	}
	var ev claudeEvent
	err := parseHookEvent(raw, &ev, "Claude Code")
	if err != nil {
		var name struct {
			ToolName string `json:"tool_name"`
		}
		if json.Unmarshal(raw, &name) == nil && !claudeJudged(name.ToolName) {
			return nil, nil // a tool fence does not judge, whatever its input
		}
		return nil, err
	}
	if ev.HookEventName != "" && ev.HookEventName != "PreToolUse" || !claudeJudged(ev.ToolName) {
		return nil, nil
	}
	if ev.ToolInput == nil {
		return nil, fmt.Errorf("%s event without tool_input, so the call is refused", ev.ToolName)
	}
	if !filepath.IsAbs(ev.Cwd) {
		return nil, fmt.Errorf("%s event without an absolute cwd (%q), so the call is refused", ev.ToolName, ev.Cwd)
	}
	need := needNoDisk
	if t, file := claudeFileTools[ev.ToolName]; file {
		need = needFor(t.access)
	}
	pol, err := o.loadFor(filepath.Clean(ev.Cwd), need)
	if err != nil {
		return nil, fmt.Errorf("the policy for %s: %w", ev.Cwd, err)
	}
	switch ev.ToolName {
	case "Bash":
		return o.claudeBash(pol, ev)
	case "WebFetch":
		return claudeFetch(pol, ev)
	}
	return claudeFile(pol, ev)
}

// parseHookEvent decodes an agent's event into ev, saying what is wrong
// with one it cannot read; agent names who sends it.
func parseHookEvent(raw []byte, ev any, agent string) error {
	err := json.Unmarshal(raw, ev)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("the hook event's %s is a JSON %s, not what %s sends, so the call is refused", te.Field, te.Value, agent)
	case errors.As(err, &te):
		return fmt.Errorf("the hook event is a JSON %s, not an object, so the call is refused", te.Value)
	}
	return fmt.Errorf("the hook event is not valid JSON (%v), so the call is refused", err)
}

// inputString is the string field of the tool's input; missing or not a
// string is an error, unless optional and missing.
func inputString(ev claudeEvent, field string, optional bool) (string, error) {
	v, ok := ev.ToolInput[field]
	if !ok && optional {
		return "", nil
	}
	var s string
	if !ok || json.Unmarshal(v, &s) != nil || s == "" && !optional {
		return "", fmt.Errorf("%s event without a string tool_input.%s, so the call is refused", ev.ToolName, field)
	}
	return s, nil
}

// claudeFile judges a file tool's path as `fence check` judges it, in
// every spelling Claude Code may open for it (see agentSpellings); a
// tool reading the files below its path is judged by what lies below
// it too.
func claudeFile(pol *policy.Policy, ev claudeEvent) (*claudeDecision, error) {
	t := claudeFileTools[ev.ToolName]
	path, err := inputString(ev, t.field, t.optional)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = ev.Cwd
	}
	res := newResolver(ev.Cwd)
	if t.recursive {
		return denyReason(recursiveRefusal(pol, res, path))
	}
	d, err := judgeSpellings(pol, res, t.access, path)
	if err != nil {
		return nil, err
	}
	return denyUnless(d)
}

// denyReason denies a call for a reason, and leaves it to Claude Code
// for none.
func denyReason(reason string, err error) (*claudeDecision, error) {
	if err != nil || reason == "" {
		return nil, err
	}
	return &claudeDecision{PermissionDecision: "deny", PermissionDecisionReason: reason}, nil
}

// claudeFetch judges a WebFetch URL as `fence check url` does.
func claudeFetch(pol *policy.Policy, ev claudeEvent) (*claudeDecision, error) {
	u, err := inputString(ev, "url", false)
	if err != nil {
		return nil, err
	}
	d, err := urlDecision(pol, u)
	if err != nil {
		return nil, err
	}
	return denyUnless(d)
}

// denyUnless denies a call the decision refuses, naming the rule as
// `fence check` prints it, and leaves an allowed one to Claude Code.
func denyUnless(d policy.Decision) (*claudeDecision, error) {
	if reason := refusal(d); reason != "" {
		return &claudeDecision{PermissionDecision: "deny", PermissionDecisionReason: reason}, nil
	}
	return nil, nil
}

// refusal is the reason a decision refuses, as `fence check` prints it,
// or "" for a decision that allows.
func refusal(d policy.Decision) string {
	if d.Allowed {
		return ""
	}
	var b bytes.Buffer
	printDecisions(&b, []policy.Decision{d}, false)
	return "fence: " + strings.TrimSpace(b.String())
}

// claudeBash judges a Bash call with the run's preflight and rewrites it
// to run under fence with the hook's policy flags.
func (o *hookOptions) claudeBash(pol *policy.Policy, ev claudeEvent) (*claudeDecision, error) {
	command, err := inputString(ev, "command", false)
	if err != nil {
		return nil, err
	}
	self := selfPath()
	reason, wrapped := o.shellRefusal(pol, self, ev.Cwd, command, "the hook runs every command under fence with its own policy")
	if reason != "" {
		return &claudeDecision{PermissionDecision: "deny", PermissionDecisionReason: reason}, nil
	}
	if wrapped {
		return &claudeDecision{PermissionDecision: "allow", PermissionDecisionReason: "fence: runs under fence already"}, nil
	}
	updated := maps.Clone(ev.ToolInput)
	updated["command"], _ = json.Marshal(o.wrap(self, ev.Cwd, command))
	return &claudeDecision{PermissionDecision: "allow", PermissionDecisionReason: "fence: runs under fence", UpdatedInput: updated}, nil
}

// shellRefusal judges an agent's shell command, whatever the agent: the
// reason it is refused ("" for none), and whether it is a command this
// hook wrapped already (judged by what it wraps). A fence command with
// its own policy flags is refused; the rest is judged by the preflight.
// why says what the agent's hook does with a command.
func (o *hookOptions) shellRefusal(pol *policy.Policy, self, cwd, command, why string) (string, bool) {
	inner, wrapped := o.unwrap(self, cwd, command)
	if !wrapped {
		if flag := foreignFenceFlag(self, command); flag != "" {
			return fmt.Sprintf("fence: refused a fence command with its own policy flag %s: %s; run the command without fence", flag, why), false
		}
		inner = command
	}
	if v := preflight(pol, nil, inner); v.Blocked {
		return "fence: " + v.Message() + "; " + commandFix(v), wrapped
	}
	return "", wrapped
}

// commandFix says how to change what refused a command.
func commandFix(v sandbox.Verdict) string {
	switch {
	case v.Rule != nil && v.Rule.Builtin:
		return "fence's default denies (command.useDefaults) refuse it; a command.allow rule in the policy (see fence config show) or command.useDefaults: false lifts it"
	case v.Rule != nil:
		return "to run it, remove or narrow that command.deny rule, or add a more specific command.allow rule, in the policy (see fence config show)"
	case v.Reason != "":
		return "the ssh rules of the policy decide this (see fence config show)"
	}
	return "write the command so that what it runs is literal, or set command.dynamic in the policy"
}

// wrap is the command line that runs command under fence with the
// hook's policy flags, the policy applied from cwd, the directory the
// call was judged from, wherever the agent starts the line (see
// --policy-dir).
func (o *hookOptions) wrap(self, cwd, command string) string {
	return o.wrapPrefix(self, cwd) + singleQuote(command)
}

// wrapWords are the words of a wrapped command line before the command.
func (o *hookOptions) wrapWords(self, cwd string) []string {
	return append(append([]string{self}, o.wrapArgs()...), "--policy-dir", cwd, "-c")
}

func (o *hookOptions) wrapPrefix(self, cwd string) string {
	words := o.wrapWords(self, cwd)
	for i, w := range words[:len(words)-1] {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ") + " "
}

// unwrap returns the command inside a command line wrap made for cwd,
// and whether it is one, exactly.
func (o *hookOptions) unwrap(self, cwd, command string) (string, bool) {
	rest, ok := strings.CutPrefix(command, o.wrapPrefix(self, cwd))
	if !ok || len(rest) < 2 || rest[0] != '\'' || rest[len(rest)-1] != '\'' {
		return "", false
	}
	inner := strings.ReplaceAll(rest[1:len(rest)-1], `'\''`, "'")
	return inner, singleQuote(inner) == rest
}

// singleQuote quotes s in single quotes, always.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// foreignFenceFlag is the first policy flag given to fence by a simple
// command of the command line whose name is fence, or "". A fence the
// hook cannot see as such still runs inside the hook's own fence, which
// it cannot widen.
func foreignFenceFlag(self, command string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return ""
	}
	found := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && found == "" && len(c.Args) > 0 {
			found = fenceCallFlag(self, c)
		}
		return found == ""
	})
	return found
}

// fenceCallFlag is the first policy flag of call when it runs fence.
func fenceCallFlag(self string, call *syntax.CallExpr) string {
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		words[i], _ = literalWord(w) // quotes taken off: 'fence' is fence
	}
	for len(words) > 1 && fenceWrappers[filepath.Base(words[0])] {
		words = words[1:] // env fence ..., command fence ...
		for len(words) > 1 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
			words = words[1:] // the wrapper's options and env's assignments
		}
	}
	if words[0] != self && filepath.Base(words[0]) != "fence" {
		return ""
	}
	for i := 1; i < len(words); i++ {
		a := words[i]
		if a == "--" {
			break
		}
		if a == "-c" || a == "--command" {
			i++ // its string; fence reads flags after it too
			continue
		}
		flag, _, _ := strings.Cut(a, "=")
		// -s and -t also come in clusters of short flags (-ds FILE).
		cluster := len(flag) > 2 && flag[0] == '-' && flag[1] != '-' && strings.ContainsAny(flag[1:], "st")
		if slices.Contains(hookPolicyFlags, flag) || cluster {
			return a
		}
	}
	return ""
}

// fenceWrappers are commands that run the command after them, through
// which an agent's fence command is looked for.
var fenceWrappers = map[string]bool{"env": true, "command": true, "exec": true, "nice": true, "nohup": true, "time": true, "sudo": true}
