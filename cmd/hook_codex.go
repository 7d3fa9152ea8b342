package cmd

import (
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
)

func init() { hookRuntimes["codex"] = (*hookOptions).codex }

// OpenAI Codex's PreToolUse hook, as its Hooks documentation describes
// it: the event is Claude Code's (session_id, cwd, hook_event_name,
// tool_name, tool_input, ...), and so is the answer (hookSpecificOutput
// with hookEventName, permissionDecision, permissionDecisionReason,
// updatedInput). Codex names every shell tool "Bash" with the command in
// tool_input.command, names its file edit tool "apply_patch" with the
// patch in tool_input.command, and names MCP tools mcp__SERVER__TOOL.
//
// Where Codex differs from Claude Code, and what fence does about it:
//   - A bare "allow" (without updatedInput) and "ask" are answers Codex
//     refuses, and a refused answer counts as a failed hook, which lets
//     the call run. So fence answers "deny" with a reason, "allow" only
//     with updatedInput (the call rewritten to run under fence), or
//     nothing at all.
//   - updatedInput is honoured for shell calls when paired with "allow"
//     from Codex 0.131 on. Earlier releases refuse it, count the hook as
//     failed and run the command as the model wrote it: fence's denials
//     still hold there, its sandbox around allowed commands does not
//     (fence hooks install --codex says so).
//   - The shell command comes as a string, as a JSON array of words, or
//     as {"kind":"argv","program":...,"args":[...]}; a rewrite keeps the
//     shape it came in, since Codex refuses one that changes it. A shape
//     fence does not know (a PowerShell script) is refused.

// codexJudged are the Codex tools fence judges; others pass untouched.
var codexJudged = map[string]bool{"Bash": true, "apply_patch": true}

// codex answers one Codex PreToolUse event. It writes nothing where
// Codex's own approval flow is to decide: a tool fence does not judge, a
// patch the policy allows, a command that runs under fence already.
func (o *hookOptions) codex(raw []byte, rerr error, stdout io.Writer) error {
	ans, err := guarded(func() (*claudeDecision, error) { return o.codexDecide(raw, rerr) })
	return writeDecision(stdout, ans, err)
}

// codexDecide is the answer to the event, nil for none; an error denies
// the call (fail closed).
func (o *hookOptions) codexDecide(raw []byte, rerr error) (*claudeDecision, error) {
	if rerr != nil {
		return nil, rerr
	}
	var ev claudeEvent
	if err := parseHookEvent(raw, &ev, "Codex"); err != nil {
		var name struct {
			ToolName string `json:"tool_name"`
		}
		if json.Unmarshal(raw, &name) == nil && !codexJudged[name.ToolName] {
			return nil, nil // a tool fence does not judge, whatever its input
		}
		return nil, err
	}
	if !codexJudged[ev.ToolName] || ev.HookEventName != "" && ev.HookEventName != "PreToolUse" {
		return nil, nil
	}
	if ev.HookEventName == "" {
		// Codex names every event, and fence's entry is under PreToolUse:
		// an unnamed one is not to be let through.
		return nil, fmt.Errorf("%s event without a hook_event_name, so the call is refused", ev.ToolName)
	}
	if ev.ToolInput == nil {
		return nil, fmt.Errorf("%s event without tool_input, so the call is refused", ev.ToolName)
	}
	if !filepath.IsAbs(ev.Cwd) {
		return nil, fmt.Errorf("%s event without an absolute cwd (%q), so the call is refused", ev.ToolName, ev.Cwd)
	}
	ev.Cwd = filepath.Clean(ev.Cwd)
	if ev.ToolName == "apply_patch" {
		pol, err := o.codexPolicy(ev.Cwd, needFor("write"))
		if err != nil {
			return nil, err
		}
		return codexPatch(pol, ev)
	}
	c, err := o.codexShellCommand(ev)
	if err != nil {
		return nil, err
	}
	// A shell command needs none of the policy's meaning on the disk,
	// unless it gives a patch to apply_patch, whose files are writes.
	need := needNoDisk
	if len(shellPatches(c.line)) > 0 {
		need = needFor("write")
	}
	pol, err := o.codexPolicy(ev.Cwd, need)
	if err != nil {
		return nil, err
	}
	return o.codexShell(pol, ev, c)
}

// codexPolicy is the policy for a call in dir, loaded as far as need says.
func (o *hookOptions) codexPolicy(dir string, need diskNeed) (*policy.Policy, error) {
	pol, err := o.loadFor(dir, need)
	if err != nil {
		return nil, fmt.Errorf("the policy for %s: %w", dir, err)
	}
	return pol, nil
}

// codexCommand is a Codex shell call's command in the shape it came in.
type codexCommand struct {
	shape string   // "script", "array" or "argv"
	line  string   // the command line fence judges and wraps
	words []string // the words of an array or argv command
}

// codexShellCommand reads the shell command of the event's tool_input,
// with the command line that runs it.
func (o *hookOptions) codexShellCommand(ev claudeEvent) (codexCommand, error) {
	c, err := codexCommandOf(ev.ToolInput)
	if err == nil && c.shape != "script" {
		c.line = o.argvLine(selfPath(), ev.Cwd, c.words)
	}
	return c, err
}

// codexCommandOf reads a shell call's tool_input in any of its shapes.
func codexCommandOf(in map[string]json.RawMessage) (codexCommand, error) {
	var kind string
	if v, ok := in["kind"]; ok && json.Unmarshal(v, &kind) != nil {
		return codexCommand{}, errors.New("Bash event whose tool_input.kind is not a string, so the call is refused")
	}
	_, program := in["program"]
	_, args := in["args"]
	switch {
	case kind == "argv" || kind == "" && (program || args) && in["command"] == nil:
		return codexArgv(in)
	case kind != "" && kind != "script":
		return codexCommand{}, fmt.Errorf("Bash event of kind %q, which fence cannot judge (it judges POSIX shell commands), so the call is refused", kind)
	case program || args:
		return codexCommand{}, errors.New("Bash event with both a command script and argv fields, so the call is refused")
	}
	var s string
	if err := json.Unmarshal(in["command"], &s); err == nil && s != "" {
		return codexCommand{shape: "script", line: s}, nil
	}
	var words []string
	if err := json.Unmarshal(in["command"], &words); err == nil && len(words) > 0 && words[0] != "" {
		return codexCommand{shape: "array", words: words}, nil
	}
	return codexCommand{}, errors.New("Bash event without a string or word-list tool_input.command, so the call is refused")
}

// codexArgv reads a {"kind":"argv","program":...,"args":[...]} command.
func codexArgv(in map[string]json.RawMessage) (codexCommand, error) {
	var program string
	var args []string
	if json.Unmarshal(in["program"], &program) != nil || program == "" {
		return codexCommand{}, errors.New("Bash argv event without a string tool_input.program, so the call is refused")
	}
	if v, ok := in["args"]; ok && json.Unmarshal(v, &args) != nil {
		return codexCommand{}, errors.New("Bash argv event whose tool_input.args is not a list of strings, so the call is refused")
	}
	return codexCommand{shape: "argv", words: append([]string{program}, args...)}, nil
}

// codexShell judges a shell call as the Claude Code hook does and
// rewrites it to run under fence with the hook's policy flags.
func (o *hookOptions) codexShell(pol *policy.Policy, ev claudeEvent, c codexCommand) (*claudeDecision, error) {
	self := selfPath()
	reason, wrapped := o.shellRefusal(pol, self, ev.Cwd, c.line, "the hook runs every command under fence with its own policy")
	if reason == "" {
		var err error
		reason, err = shellPatchRefusal(pol, ev.Cwd, c.line)
		if err != nil {
			return nil, err
		}
	}
	switch {
	case reason != "":
		return &claudeDecision{PermissionDecision: "deny", PermissionDecisionReason: reason}, nil
	case wrapped:
		return nil, nil // under fence already; Codex refuses a bare allow
	}
	return &claudeDecision{PermissionDecision: "allow", PermissionDecisionReason: "fence: runs under fence",
		UpdatedInput: o.codexRewrite(self, ev.Cwd, ev.ToolInput, c)}, nil
}

// argvLine is the command line that runs words. A list that is this
// hook's own wrapping (fence, its policy flags, -c, a command) comes back
// as the line wrap makes, so that it is recognised and not wrapped twice.
func (o *hookOptions) argvLine(self, cwd string, words []string) string {
	prefix := o.wrapWords(self, cwd)
	if len(words) == len(prefix)+1 && slices.Equal(words[:len(prefix)], prefix) {
		return o.wrap(self, cwd, words[len(prefix)])
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// codexRewrite is the call's tool_input with its command run under
// fence, in the shape the command came in. An argv rewrite leaves out
// the display command: Codex checks one given against its own quoting of
// program and args, and needs none.
func (o *hookOptions) codexRewrite(self, cwd string, in map[string]json.RawMessage, c codexCommand) map[string]json.RawMessage {
	out := maps.Clone(in)
	argv := append(o.wrapWords(self, cwd), c.line)
	switch c.shape {
	case "script":
		out["command"], _ = json.Marshal(o.wrap(self, cwd, c.line))
	case "array":
		out["command"], _ = json.Marshal(argv)
	default:
		delete(out, "command")
		out["program"], _ = json.Marshal(argv[0])
		out["args"], _ = json.Marshal(argv[1:])
	}
	return out
}

// codexPatch judges every file an apply_patch call adds, updates,
// deletes or moves (source and destination) as a write, as `fence check
// write` does, in every spelling Codex may open for it ("~/" is the
// home directory: see agentSpellings); the first refused one denies the
// patch. A patch fence cannot read is refused.
func codexPatch(pol *policy.Policy, ev claudeEvent) (*claudeDecision, error) {
	patch, err := inputString(ev, "command", false)
	if err != nil {
		return nil, err
	}
	paths, err := patchPaths(patch)
	if err != nil {
		return nil, fmt.Errorf("apply_patch input that fence cannot read as a patch (%v), so the call is refused", err)
	}
	res := newResolver(ev.Cwd)
	for _, p := range paths {
		reason, err := pathRefusal(pol, res, "write", p)
		if reason != "" || err != nil {
			return denyReason(reason, err)
		}
	}
	return nil, nil
}

// shellPatchRefusal judges the files of every patch a shell command
// applies with Codex's apply_patch command (apply_patch <<'EOF' ...
// EOF, or the patch as its argument) as an apply_patch call's are: the
// reason the first refused one is refused, or "". A patch fence cannot
// read here is left to the sandbox the command runs in, which holds its
// writes to the policy wherever they go; so are paths the command's own
// cd would move.
func shellPatchRefusal(pol *policy.Policy, cwd, command string) (string, error) {
	for _, patch := range shellPatches(command) {
		paths, err := patchPaths(patch)
		if err != nil {
			continue
		}
		for _, p := range paths {
			reason, err := pathRefusal(pol, newResolver(cwd), "write", p)
			if reason != "" || err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}

// shellPatches are the literal patches the command line gives to
// apply_patch (or applypatch), by here-document or argument.
func shellPatches(command string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	var patches []string
	syntax.Walk(f, func(n syntax.Node) bool {
		st, _ := n.(*syntax.Stmt)
		if st == nil {
			return true
		}
		call, _ := st.Cmd.(*syntax.CallExpr)
		if call == nil || len(call.Args) == 0 || !slices.Contains([]string{"apply_patch", "applypatch"}, filepath.Base(call.Args[0].Lit())) {
			return true
		}
		for _, r := range st.Redirs {
			if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
				if text, ok := literalWord(r.Hdoc); ok {
					patches = append(patches, text)
				}
			}
		}
		if len(call.Args) > 1 {
			if text, ok := literalWord(call.Args[1]); ok {
				patches = append(patches, text)
			}
		}
		return true
	})
	return patches
}
