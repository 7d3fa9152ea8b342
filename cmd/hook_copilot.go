package cmd

// The GitHub Copilot CLI and the Copilot coding agent run the hooks of
// .github/hooks/*.json (the CLI also those of ~/.copilot/hooks/*.json).
// The format is documented in GitHub's "GitHub Copilot hooks reference"
// (formerly "GitHub Copilot CLI hooks reference") and "Hooks
// configuration" pages; fence's entry is a command hook under the
// camelCase preToolUse event, whose event is
//
//	{"sessionId": "...", "timestamp": 1704614600000, "cwd": "/abs/dir",
//	 "toolName": "bash", "toolArgs": ...}
//
// and whose answer is a JSON object on stdout with permissionDecision
// ("allow", "deny", "ask"), permissionDecisionReason and modifiedArgs
// (the tool's arguments to use instead).
//
// Where the pages disagree, fence assumes what fails closed:
//   - toolArgs is "a JSON string containing the tool's arguments" on the
//     configuration page, "unknown" on the reference page and an object
//     in the SDK's hook. Both are read; anything else (a number, an
//     array, a string that does not hold an object) refuses the call.
//   - The configuration page says only "deny" is processed; the
//     reference page says a hook can modify the call with modifiedArgs,
//     and the hosted coding agent's runtime may ignore it. So a shell
//     call is rewritten to run under fence with modifiedArgs alone,
//     without an "allow": a runtime that ignores modifiedArgs runs the
//     command it was going to run, through Copilot's own permission
//     flow, and never one fence approved unwrapped. A call the command
//     policy refuses is denied whichever runtime reads the answer.
//   - The event's keys are read exactly as spelled (Go's decoder would
//     take "toolname" for "toolName", where Copilot's JSON.parse would
//     not), so a duplicated key in another spelling cannot change the
//     tool fence judges.
//
// The hook exits 0 with its answer even when it refuses: Copilot denies
// a call whose preToolUse hook fails too, but with its own text, and a
// timed-out hook lets the call through.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

func init() { hookRuntimes["copilot"] = (*hookOptions).copilot }

// copilotAnswer is a preToolUse hook's answer.
type copilotAnswer struct {
	PermissionDecision       string                     `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	ModifiedArgs             map[string]json.RawMessage `json:"modifiedArgs,omitempty"`
}

// copilotEvent is the part of a preToolUse event fence reads; args is
// nil for an event without toolArgs.
type copilotEvent struct {
	tool, cwd string
	args      json.RawMessage
}

// copilotFileTools are Copilot's file tools (the reference page's "Tool
// names for hook matching" and its table of Claude Code equivalents):
// the access each needs, the argument naming the path, whether it may
// be left out (the event's cwd then), and whether the tool reads the
// contents of every file below it (see recursiveRefusal and
// linkRefusal).
var copilotFileTools = map[string]struct {
	access, field       string
	optional, recursive bool
}{
	"view":   {"read", "path", false, false},
	"glob":   {"read", "path", true, false},
	"grep":   {"read", "path", true, true},
	"rg":     {"read", "path", true, true},
	"create": {"write", "path", false, false},
	"edit":   {"write", "path", false, false},
}

// copilotNeed is how much of the disk a call of the tool is judged by:
// none for a shell command or a URL, the file tool's access, and all for
// the tools that may write (str_replace_editor's command decides).
func copilotNeed(tool string) diskNeed {
	switch tool {
	case "bash", "web_fetch":
		return needNoDisk
	}
	if t, ok := copilotFileTools[tool]; ok {
		return needFor(t.access)
	}
	return needAll
}

// copilotJudged reports whether fence judges calls of the tool.
func copilotJudged(tool string) bool {
	switch tool {
	case "bash", "powershell", "web_fetch", "str_replace_editor", "apply_patch":
		return true
	}
	_, file := copilotFileTools[tool]
	return file
}

// copilot answers one Copilot preToolUse event. It writes nothing where
// Copilot's own permission flow is to decide: a tool fence does not
// judge, a file or fetch call the policy allows.
func (o *hookOptions) copilot(raw []byte, rerr error, stdout io.Writer) error {
	ans, err := guarded(func() (*copilotAnswer, error) { return o.copilotDecide(raw, rerr) })
	if err != nil {
		ans = &copilotAnswer{PermissionDecision: "deny", PermissionDecisionReason: "fence: " + err.Error()}
	}
	if ans == nil {
		return nil
	}
	return writeAnswer(stdout, ans, true)
}

// copilotDecide is the answer to the event, nil for none; an error
// denies the call (fail closed).
func (o *hookOptions) copilotDecide(raw []byte, rerr error) (*copilotAnswer, error) {
	if rerr != nil {
		return nil, rerr
	}
	ev, err := parseCopilotEvent(raw)
	if err != nil {
		return nil, err
	}
	if !copilotJudged(ev.tool) {
		return nil, nil
	}
	if ev.args == nil {
		return nil, fmt.Errorf("%s event without toolArgs, so the call is refused", ev.tool)
	}
	if !filepath.IsAbs(ev.cwd) {
		return nil, fmt.Errorf("%s event without an absolute cwd (%q), so the call is refused", ev.tool, ev.cwd)
	}
	ev.cwd = filepath.Clean(ev.cwd)
	if ev.tool == "powershell" {
		return nil, errors.New("fence judges bash commands, not PowerShell ones, so the powershell call is refused")
	}
	pol, err := o.loadFor(ev.cwd, copilotNeed(ev.tool))
	if err != nil {
		return nil, fmt.Errorf("the policy for %s: %w", ev.cwd, err)
	}
	if ev.tool == "apply_patch" {
		return copilotPatch(pol, ev)
	}
	args, err := copilotArgs(ev)
	if err != nil {
		return nil, err
	}
	switch ev.tool {
	case "bash":
		return o.copilotBash(pol, ev, args)
	case "web_fetch":
		u, err := argString(ev.tool, args, "url", false)
		if err != nil {
			return nil, err
		}
		d, err := urlDecision(pol, u)
		if err != nil {
			return nil, err
		}
		return copilotDenyUnless(d), nil
	}
	return copilotFile(pol, ev, args)
}

// parseCopilotEvent decodes the event's top level, each key read only as
// spelled. A toolName that is there but not a string refuses the call;
// an event without one is refused too, since fence's entry answers
// every tool and cannot tell which one this is.
func parseCopilotEvent(raw []byte) (copilotEvent, error) {
	var top map[string]json.RawMessage
	if err := parseHookEvent(raw, &top, "Copilot"); err != nil {
		return copilotEvent{}, err
	}
	if top == nil {
		return copilotEvent{}, errors.New("the hook event is a JSON null, not an object, so the call is refused")
	}
	var ev copilotEvent
	name, ok := top["toolName"]
	if !ok {
		return ev, errors.New("the hook event has no toolName (fence's entry belongs under the camelCase preToolUse event), so the call is refused")
	}
	if json.Unmarshal(name, &ev.tool) != nil {
		return ev, fmt.Errorf("the hook event's toolName is %s, not a string, so the call is refused", jsonKind(name))
	}
	if cwd, ok := top["cwd"]; ok && json.Unmarshal(cwd, &ev.cwd) != nil {
		return ev, fmt.Errorf("the hook event's cwd is %s, not a string, so the call is refused", jsonKind(cwd))
	}
	if a, ok := top["toolArgs"]; ok && string(a) != "null" {
		ev.args = a
	}
	return ev, nil
}

// copilotArgs are the tool's arguments: an object, or a string holding
// one (how the CLI's command hooks have been given them).
func copilotArgs(ev copilotEvent) (map[string]json.RawMessage, error) {
	var args map[string]json.RawMessage
	if json.Unmarshal(ev.args, &args) == nil && args != nil {
		return args, nil
	}
	var s string
	if json.Unmarshal(ev.args, &s) != nil {
		return nil, fmt.Errorf("%s event whose toolArgs is %s, neither an object nor a string holding one, so the call is refused", ev.tool, jsonKind(ev.args))
	}
	if json.Unmarshal([]byte(s), &args) != nil || args == nil {
		return nil, fmt.Errorf("%s event whose toolArgs is a string that does not hold a JSON object, so the call is refused", ev.tool)
	}
	return args, nil
}

// jsonKind names the kind of a JSON value, for a message.
func jsonKind(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	if s == "" {
		return "empty"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// argString is the string argument field of the tool's call; missing or
// not a string is an error, unless optional and missing.
func argString(tool string, args map[string]json.RawMessage, field string, optional bool) (string, error) {
	v, ok := args[field]
	if !ok && optional {
		return "", nil
	}
	var s string
	if !ok || json.Unmarshal(v, &s) != nil || s == "" && !optional {
		return "", fmt.Errorf("%s event without a string toolArgs.%s, so the call is refused", tool, field)
	}
	return s, nil
}

// copilotBash judges a bash call as the run's preflight does and, when
// it may run, rewrites its command to run under fence with the hook's
// policy flags.
func (o *hookOptions) copilotBash(pol *policy.Policy, ev copilotEvent, args map[string]json.RawMessage) (*copilotAnswer, error) {
	command, err := argString(ev.tool, args, "command", false)
	if err != nil {
		return nil, err
	}
	self := selfPath()
	reason, wrapped := o.shellRefusal(pol, self, ev.cwd, command, "the hook runs every command under fence with its own policy")
	if reason != "" {
		return &copilotAnswer{PermissionDecision: "deny", PermissionDecisionReason: reason}, nil
	}
	if wrapped {
		return nil, nil // runs under fence already; Copilot's own flow decides
	}
	modified := maps.Clone(args)
	modified["command"], _ = json.Marshal(o.wrap(self, ev.cwd, command))
	return &copilotAnswer{ModifiedArgs: modified}, nil
}

// copilotFile judges a file tool's path as `fence check` judges it.
// str_replace_editor's view reads, its other commands write.
func copilotFile(pol *policy.Policy, ev copilotEvent, args map[string]json.RawMessage) (*copilotAnswer, error) {
	t, ok := copilotFileTools[ev.tool]
	if !ok { // str_replace_editor
		t.access, t.field = "write", "path"
		if c, _ := argString(ev.tool, args, "command", true); c == "view" {
			t.access = "read"
		}
	}
	path, err := argString(ev.tool, args, t.field, t.optional)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = ev.cwd
	}
	if t.recursive {
		res := newResolver(ev.cwd)
		reason, err := recursiveRefusal(pol, res, path)
		if reason == "" && err == nil {
			// Copilot's reference does not say whether its search follows
			// links (ripgrep does with --follow): fence takes it that it
			// may, which only ever adds a refusal.
			reason, err = linkRefusal(pol, res, absFrom(ev.cwd, path))
		}
		return copilotDenyFor(reason), err
	}
	return copilotJudge(pol, ev.cwd, t.access, []string{path})
}

// copilotJudge denies the call for the first path the policy refuses
// the access to, in any spelling Copilot may open for it (see
// agentSpellings: whether Copilot takes "~/" for the home directory or
// trims a path is not documented, so fence assumes it may).
func copilotJudge(pol *policy.Policy, dir, access string, paths []string) (*copilotAnswer, error) {
	res := newResolver(dir)
	for _, p := range paths {
		reason, err := pathRefusal(pol, res, access, p)
		if reason != "" || err != nil {
			return copilotDenyFor(reason), err
		}
	}
	return nil, nil
}

// copilotDenyFor is the answer denying a call for reason, nil for none.
func copilotDenyFor(reason string) *copilotAnswer {
	if reason == "" {
		return nil
	}
	return &copilotAnswer{PermissionDecision: "deny", PermissionDecisionReason: reason}
}

// copilotDenyUnless denies a call the decision refuses, naming the rule
// as `fence check` prints it, and leaves an allowed one to Copilot.
func copilotDenyUnless(d policy.Decision) *copilotAnswer {
	if reason := refusal(d); reason != "" {
		return &copilotAnswer{PermissionDecision: "deny", PermissionDecisionReason: reason}
	}
	return nil
}

// copilotPatch judges every file an apply_patch call adds, updates,
// deletes or moves as a write, reading the patch as the Codex hook does
// (the tool takes Codex's patch format). Its toolArgs is the patch
// itself, or an object holding it as input (or patch); a patch fence
// cannot read is refused, since fence cannot tell what it writes.
func copilotPatch(pol *policy.Policy, ev copilotEvent) (*copilotAnswer, error) {
	var patch string
	if args, err := copilotArgs(ev); err == nil {
		field := "input"
		if _, ok := args[field]; !ok {
			field = "patch"
		}
		if patch, err = argString(ev.tool, args, field, false); err != nil {
			return nil, err
		}
	} else if json.Unmarshal(ev.args, &patch) != nil {
		return nil, err
	}
	files, err := patchPaths(patch)
	if err != nil {
		return nil, fmt.Errorf("apply_patch call whose patch fence cannot read (%v), so the call is refused", err)
	}
	return copilotJudge(pol, ev.cwd, "write", files)
}
