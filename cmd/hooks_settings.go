package cmd

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
	"mvdan.cc/sh/v3/syntax"

	"github.com/fence-sandbox/fence/policy"
)

// claudeGroup is one matcher group of Claude Code's hooks, in the order
// its keys are written.
type claudeGroup struct {
	Matcher string       `json:"matcher"`
	Hooks   []claudeHook `json:"hooks"`
}

type claudeHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// settingsDoc is a parsed settings file: its top-level object, and what
// it takes to name a place in it.
type settingsDoc struct {
	file string
	src  []byte
	root hujson.Value
	top  *hujson.Object
	unit string // one level of indentation
}

// parseSettings parses src, a JSONC settings file; an error names
// file:line:col. Blank (whitespace and comments only) is an empty object.
func parseSettings(file string, src []byte) (*settingsDoc, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	} else if blankJSONC(src) {
		src = append(bytes.TrimRight(src, " \t\r\n"), "\n{}\n"...)
	}
	root, err := hujson.Parse(src)
	if err != nil {
		return nil, jsoncError(file, err)
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, docError(file, src, &root, "want an object at the top level")
	}
	d := &settingsDoc{file: file, src: src, root: root, top: top, unit: "  "}
	if ind := indentOf(memberBefores(top), ""); ind != "" {
		d.unit = ind
	}
	return d, nil
}

// blankJSONC reports whether src holds only whitespace and comments.
func blankJSONC(src []byte) bool {
	probe := append(append([]byte{}, src...), "\nnull"...)
	v, err := hujson.Parse(probe)
	return err == nil && v.StartOffset > len(src)
}

// jsoncError turns hujson's "hujson: line L, column C: msg" into an error
// naming file:line:col.
func jsoncError(file string, err error) error {
	var line, col int
	msg := err.Error()
	if _, serr := fmt.Sscanf(msg, "hujson: line %d, column %d:", &line, &col); serr != nil {
		return &policy.FileError{File: file, Msg: "invalid JSONC: " + strings.TrimPrefix(msg, "hujson: ")}
	}
	_, rest, _ := strings.Cut(msg, fmt.Sprintf("column %d: ", col))
	return &policy.FileError{File: file, Pos: policy.Pos{Line: line, Col: col}, Msg: "invalid JSONC: " + rest}
}

// docError is a problem with the value v, named by its place in src.
func docError(file string, src []byte, v *hujson.Value, msg string) error {
	before := src[:min(v.StartOffset, len(src))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return &policy.FileError{File: file, Pos: policy.Pos{Line: line, Col: col}, Msg: msg}
}

// field finds name in obj. Two members of that name are an error: JSON
// readers disagree on which one counts, so fence would edit one while
// the agent reads the other.
func (d *settingsDoc) field(obj *hujson.Object, name string) (int, error) {
	at := -1
	for i := range obj.Members {
		lit, ok := obj.Members[i].Name.Value.(hujson.Literal)
		if !ok || lit.String() != name {
			continue
		}
		if at >= 0 {
			return 0, docError(d.file, d.src, &obj.Members[i].Name, fmt.Sprintf("%q appears twice", name))
		}
		at = i
	}
	return at, nil
}

// preToolUse finds hooks.PreToolUse; either may be missing (nil).
func (d *settingsDoc) preToolUse() (hooks *hujson.Object, pre *hujson.Array, err error) {
	return d.hookList("PreToolUse")
}

// hookList finds hooks.<list>; either may be missing (nil).
func (d *settingsDoc) hookList(list string) (hooks *hujson.Object, arr *hujson.Array, err error) {
	hooks, err = d.hooksObject()
	if err != nil || hooks == nil {
		return nil, nil, err
	}
	j, err := d.field(hooks, list)
	if err != nil || j < 0 {
		return hooks, nil, err
	}
	v := &hooks.Members[j].Value
	if arr, _ = v.Value.(*hujson.Array); arr == nil {
		return nil, nil, docError(d.file, d.src, v, "hooks."+list+": want an array")
	}
	return hooks, arr, nil
}

// hooksObject finds the top-level hooks object, nil when missing.
func (d *settingsDoc) hooksObject() (*hujson.Object, error) {
	i, err := d.field(d.top, "hooks")
	if err != nil || i < 0 {
		return nil, err
	}
	v := &d.top.Members[i].Value
	hooks, _ := v.Value.(*hujson.Object)
	if hooks == nil {
		return nil, docError(d.file, d.src, v, "hooks: want an object")
	}
	return hooks, d.noDuplicates(v)
}

// noDuplicates refuses two members of one name in any object inside v.
// The agents' JSON readers disagree on which one counts (Node's takes
// the last, Codex's refuses the file), so fence would judge or edit an
// entry the agent does not run as written.
func (d *settingsDoc) noDuplicates(v *hujson.Value) error {
	switch c := v.Value.(type) {
	case *hujson.Object:
		seen := make(map[string]bool, len(c.Members))
		for i := range c.Members {
			m := &c.Members[i]
			if lit, ok := m.Name.Value.(hujson.Literal); ok {
				if seen[lit.String()] {
					return docError(d.file, d.src, &m.Name, fmt.Sprintf("%q appears twice", lit.String()))
				}
				seen[lit.String()] = true
			}
			if err := d.noDuplicates(&m.Value); err != nil {
				return err
			}
		}
	case *hujson.Array:
		for i := range c.Elements {
			if err := d.noDuplicates(&c.Elements[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// onlyKeys reports whether obj's members are exactly names, in any
// order (obj holds no name twice: see noDuplicates).
func onlyKeys(obj *hujson.Object, names ...string) bool {
	if obj == nil || len(obj.Members) != len(names) {
		return false
	}
	for _, m := range obj.Members {
		lit, ok := m.Name.Value.(hujson.Literal)
		if !ok || !slices.Contains(names, lit.String()) {
			return false
		}
	}
	return true
}

// isExactCommandHook reports whether group (a matcher group of matcher)
// and hook in it are exactly what fence writes: the group's keys matcher
// and hooks, the hook's type "command" and command, nothing else. A
// timeout, async, a second matcher or any other key would change what
// the agent does with fence's hook, so such an entry is not counted as
// installed (install replaces it).
func isExactCommandHook(group, hook *hujson.Object, matcher, command string) bool {
	return onlyKeys(group, "matcher", "hooks") && stringField(group, "matcher") == matcher &&
		onlyKeys(hook, "type", "command") && stringField(hook, "type") == "command" && stringField(hook, "command") == command
}

// installClaudeHook returns src with fence's PreToolUse hook running
// command (which names the fence binary self), and no other hook of
// fence's (an older or upstream entry is
// replaced). src comes back unchanged when it holds exactly that already.
func installClaudeHook(file string, src []byte, command, self string) ([]byte, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	_, pre, err := d.preToolUse()
	if err != nil {
		return nil, err
	}
	if pre != nil && holdsOnly(pre, command, self) {
		return src, nil
	}
	if _, err := d.removeFenceHooks(self); err != nil {
		return nil, err
	}
	d.addGroup(claudeGroup{Matcher: claudeMatcher, Hooks: []claudeHook{{Type: "command", Command: command}}})
	return d.root.Pack(), nil
}

// uninstallClaudeHook returns src without fence's hooks, and how many it
// removed.
func uninstallClaudeHook(file string, src []byte, self string) ([]byte, int, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, 0, err
	}
	n, err := d.removeFenceHooks(self)
	if err != nil || n == 0 {
		return src, n, err
	}
	if len(d.top.Members) == 0 && len(bytes.TrimSpace(d.top.AfterExtra)) == 0 {
		d.top.AfterExtra = nil // `{}` as it was before install
	}
	return d.root.Pack(), n, nil
}

// holdsOnly reports whether fence's one hook in pre is command, in a
// group of fence's matcher, both exactly as fence writes them.
func holdsOnly(pre *hujson.Array, command, self string) bool {
	found, exact := 0, false
	for _, g := range pre.Elements {
		obj, _ := g.Value.(*hujson.Object)
		for _, h := range groupHooks(obj) {
			c, ok := hookCommandOf(h)
			if !ok || !isFenceHook(c, self) {
				continue
			}
			found++
			exact = isExactCommandHook(obj, asObject(h), claudeMatcher, command)
		}
	}
	return found == 1 && exact
}

// removeFenceHooks takes fence's Claude Code hooks out of
// hooks.PreToolUse (see removeAgentHooks).
func (d *settingsDoc) removeFenceHooks(self string) (int, error) {
	return d.removeAgentHooks("claude", self)
}

// removeAgentHooks takes fence's hooks for agent out of hooks.PreToolUse,
// in Claude Code's layout (Codex's too). A matcher group, the PreToolUse
// list and the hooks object go too when fence's hooks were all they held.
func (d *settingsDoc) removeAgentHooks(agent, self string) (int, error) {
	hooks, pre, err := d.preToolUse()
	if err != nil || pre == nil {
		return 0, err
	}
	n := 0
	for gi := len(pre.Elements) - 1; gi >= 0; gi-- {
		obj, _ := pre.Elements[gi].Value.(*hujson.Object)
		arr := groupHookArray(obj)
		if arr == nil {
			continue
		}
		removed := 0
		for hi := len(arr.Elements) - 1; hi >= 0; hi-- {
			if c, ok := hookCommandOf(arr.Elements[hi]); ok && isFenceAgentHook(c, self, agent) {
				removeElement(arr, hi)
				removed++
			}
		}
		n += removed
		if removed > 0 && len(arr.Elements) == 0 {
			removeElement(pre, gi)
		}
	}
	if n > 0 && len(pre.Elements) == 0 {
		j, _ := d.field(hooks, "PreToolUse")
		removeMember(hooks, j)
		if len(hooks.Members) == 0 {
			i, _ := d.field(d.top, "hooks")
			removeMember(d.top, i)
		}
	}
	return n, nil
}

func groupHookArray(obj *hujson.Object) *hujson.Array {
	if obj == nil {
		return nil
	}
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == "hooks" {
			arr, _ := obj.Members[i].Value.Value.(*hujson.Array)
			return arr
		}
	}
	return nil
}

func groupHooks(obj *hujson.Object) []hujson.Value {
	if arr := groupHookArray(obj); arr != nil {
		return arr.Elements
	}
	return nil
}

// hookCommandOf is the command of a {"type": "command"} hook.
func hookCommandOf(h hujson.Value) (string, bool) {
	obj, _ := h.Value.(*hujson.Object)
	if obj == nil || stringField(obj, "type") != "command" {
		return "", false
	}
	c := stringField(obj, "command")
	return c, c != ""
}

func stringField(obj *hujson.Object, name string) string {
	if obj == nil {
		return ""
	}
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			if v, ok := obj.Members[i].Value.Value.(hujson.Literal); ok && v.Kind() == '"' {
				return v.String()
			}
		}
	}
	return ""
}

// isFenceHook reports whether command runs a fence binary's Claude Code
// hook and nothing else (see isFenceHookWords).
func isFenceHook(command, self string) bool { return isFenceAgentHook(command, self, "claude") }

// isFenceAgentHook reports whether command is one plain command running
// fence's hook for agent (see isFenceHookWords).
func isFenceAgentHook(command, self, agent string) bool {
	words, ok := literalWords(command)
	return ok && isFenceHookWords(words, self, agent)
}

// isFenceHookWords reports whether a command line's words run a fence
// binary's hook for agent and nothing else: the binary (a path ending in
// fence, or self, the binary the entry is written for), then ours (`hook
// AGENT`) or upstream's (`--AGENT-pre-tool-use`), with only the policy
// flags a hook entry carries (-s/--settings FILE, -t/--template NAME)
// before or after it. Any other word, such as a program fence would run
// (`fence -t code sh hook claude`), makes it the user's own command.
func isFenceHookWords(words []string, self, agent string) bool {
	if len(words) < 2 || (path.Base(words[0]) != "fence" && words[0] != self) {
		return false
	}
	core := 0
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-s", w == "--settings", w == "-t", w == "--template":
			if i+1 == len(words) {
				return false
			}
			i++
		case strings.HasPrefix(w, "--settings="), strings.HasPrefix(w, "--template="):
		case w == upstreamHookFlag(agent):
			core++
		case w == "hook" && i+1 < len(words) && words[i+1] == agent:
			core++
			i++
		default:
			return false
		}
	}
	return core == 1
}

// literalWords splits a shell command of one simple command with no
// expansions into its words; ok is false for anything else.
func literalWords(command string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || len(call.Assigns) > 0 || st.Negated || st.Background {
		return nil, false
	}
	var words []string
	for _, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			return nil, false
		}
		words = append(words, s)
	}
	return words, true
}

func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(lit.Value, `\`) {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// hooksDisabled reports whether src sets Claude Code's disableAllHooks,
// under which no hook, fence's included, runs.
func hooksDisabled(src []byte) bool {
	d, err := parseSettings("", src)
	if err != nil {
		return false
	}
	i, err := d.field(d.top, "disableAllHooks")
	if err != nil || i < 0 {
		return err != nil
	}
	lit, ok := d.top.Members[i].Value.Value.(hujson.Literal)
	return !ok || lit.Kind() != 'f'
}
