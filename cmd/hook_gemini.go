package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// Gemini CLI's hook format is documented in its "Hooks reference" (the
// base input: session_id, transcript_path, cwd, hook_event_name,
// timestamp; BeforeTool adds tool_name and tool_input; the answer:
// decision "deny" or "block" with a reason sent to the model, and
// hookSpecificOutput.tool_input, which overrides the model's arguments)
// and its tools in the "Tools" pages (run_shell_command, the file system
// tools, web_fetch, google_web_search). Argument names changed between
// releases (read_file's absolute_path became file_path, a directory's
// path became dir_path, search_file_content became grep_search): fence
// reads every spelling, judges every one a call gives, and refuses a
// judged call that gives none.

func init() { hookRuntimes["gemini"] = (*hookOptions).gemini }

// geminiAnswer is a BeforeTool hook's answer: a denial and its reason,
// or the tool's rewritten input.
type geminiAnswer struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName string                     `json:"hookEventName"`
	ToolInput     map[string]json.RawMessage `json:"tool_input"`
}

// geminiFileTool is a Gemini CLI file tool: the access it needs, the
// input fields that may name its path (every spelling a release used),
// whether the path may be left out (the event's cwd then), the fields
// holding globs whose fixed leading directories it also reaches, and
// whether it reads the contents of every file below its paths (see
// recursiveRefusal). A search's include glob is not taken to narrow
// what it reads: Gemini's search backends (git grep, grep --include,
// ripgrep) each match it in their own way.
type geminiFileTool struct {
	access    string
	fields    []string
	optional  bool
	globs     []string
	recursive bool
}

// geminiFileTools are the file tools fence judges, by the names Gemini
// CLI's tools reference gives, with the legacy alias of grep_search.
// read_many_files is judged apart: its paths are a list.
var geminiFileTools = map[string]geminiFileTool{
	"read_file":           {access: "read", fields: []string{"file_path", "absolute_path", "path"}},
	"write_file":          {access: "write", fields: []string{"file_path", "absolute_path", "path"}},
	"replace":             {access: "write", fields: []string{"file_path", "absolute_path", "path"}},
	"list_directory":      {access: "read", fields: []string{"dir_path", "path", "absolute_path"}},
	"glob":                {access: "read", fields: []string{"dir_path", "path"}, optional: true, globs: []string{"pattern"}},
	"grep_search":         {access: "read", fields: []string{"dir_path", "path"}, optional: true, globs: []string{"include_pattern", "include"}, recursive: true},
	"search_file_content": {access: "read", fields: []string{"dir_path", "path"}, optional: true, globs: []string{"include_pattern", "include"}, recursive: true},
}

// geminiShellTool and the rest name the other tools fence judges.
const (
	geminiShellTool     = "run_shell_command"
	geminiFetchTool     = "web_fetch"
	geminiReadManyTool  = "read_many_files"
	geminiBeforeToolEvt = "BeforeTool"
)

// geminiJudged reports whether fence judges calls of the tool. Gemini's
// google_web_search is not among them: it sends a query, not a URL, to
// the Gemini API the agent talks to for every turn, and reaches no host
// the call names.
func geminiJudged(tool string) bool {
	_, file := geminiFileTools[tool]
	return file || tool == geminiShellTool || tool == geminiFetchTool || tool == geminiReadManyTool
}

// gemini answers one Gemini CLI BeforeTool event. It writes nothing
// where Gemini's own flow is to decide: a tool fence does not judge, a
// call the policy allows as it is. Every failure is a denial on stdout
// with exit status 0: Gemini runs the tool after a hook that exits with
// any status but 0 or 2.
func (o *hookOptions) gemini(raw []byte, rerr error, stdout io.Writer) error {
	ans, err := guarded(func() (*geminiAnswer, error) { return o.geminiDecide(raw, rerr) })
	if err != nil {
		ans = &geminiAnswer{Decision: "deny", Reason: "fence: " + err.Error()}
	}
	if ans == nil {
		return nil
	}
	return writeAnswer(stdout, ans, false) // a command's && stays readable
}

// geminiDecide is the answer to the event, nil for none; an error denies
// the call (fail closed).
func (o *hookOptions) geminiDecide(raw []byte, rerr error) (*geminiAnswer, error) {
	if rerr != nil {
		return nil, rerr
	}
	var ev claudeEvent // Gemini's BeforeTool carries the same fields
	if err := parseHookEvent(raw, &ev, "Gemini CLI"); err != nil {
		var name struct {
			ToolName string `json:"tool_name"`
		}
		if json.Unmarshal(raw, &name) == nil && !geminiJudged(name.ToolName) {
			return nil, nil // a tool fence does not judge, whatever its input
		}
		return nil, err
	}
	if !geminiJudged(ev.ToolName) || ev.HookEventName != "" && ev.HookEventName != geminiBeforeToolEvt {
		return nil, nil
	}
	if ev.HookEventName == "" {
		// Gemini names every event, and fence's entry is under BeforeTool.
		return nil, fmt.Errorf("%s event without a hook_event_name, so the call is refused", ev.ToolName)
	}
	if ev.ToolInput == nil {
		return nil, fmt.Errorf("%s event without tool_input, so the call is refused", ev.ToolName)
	}
	if !filepath.IsAbs(ev.Cwd) {
		return nil, fmt.Errorf("%s event without an absolute cwd (%q), so the call is refused", ev.ToolName, ev.Cwd)
	}
	ev.Cwd = filepath.Clean(ev.Cwd)
	if ev.ToolName == geminiShellTool {
		return o.geminiShell(ev)
	}
	need := needNoDisk // a fetch
	if t, ok := geminiFileTools[ev.ToolName]; ok {
		need = needFor(t.access)
	} else if ev.ToolName == geminiReadManyTool {
		need = needFor("read")
	}
	pol, err := o.loadFor(ev.Cwd, need)
	if err != nil {
		return nil, fmt.Errorf("the policy for %s: %w", ev.Cwd, err)
	}
	switch ev.ToolName {
	case geminiFetchTool:
		return geminiFetch(pol, ev)
	case geminiReadManyTool:
		return geminiReadMany(pol, ev)
	}
	return geminiFile(pol, ev)
}

// geminiDeny is the answer denying a call for reason.
func geminiDeny(reason string) *geminiAnswer {
	return &geminiAnswer{Decision: "deny", Reason: reason}
}

// geminiShell judges a run_shell_command call and rewrites its command
// to run under fence with the hook's policy flags. The answer gives no
// decision: Gemini's own confirmation of the call stays as it is.
//
// A call may name the directory it runs in (dir_path). The call is
// judged with the policy of the event's cwd, and the wrapped fence
// applies that policy (--policy-dir) wherever Gemini starts it: a call
// choosing its own directory must not move the policy's relative rules.
func (o *hookOptions) geminiShell(ev claudeEvent) (*geminiAnswer, error) {
	command, err := inputString(ev, "command", false)
	if err != nil {
		return nil, err
	}
	if _, err := geminiShellDir(ev); err != nil {
		return nil, err
	}
	pol, err := o.loadFor(ev.Cwd, needNoDisk) // the command runs under a fence that prepares the disk itself
	if err != nil {
		return nil, fmt.Errorf("the policy for %s: %w", ev.Cwd, err)
	}
	self := selfPath()
	reason, wrapped := o.shellRefusal(pol, self, ev.Cwd, command, "the hook runs every command under fence with its own policy")
	if reason != "" {
		return geminiDeny(reason), nil
	}
	if wrapped {
		return nil, nil // wrapped by this hook for this cwd already
	}
	// The whole input goes back, not the command alone: some releases
	// merge tool_input into the call's arguments, others replace them.
	updated := maps.Clone(ev.ToolInput)
	updated["command"] = rawJSONString(o.wrap(self, ev.Cwd, command))
	return &geminiAnswer{Reason: "fence: runs under fence", HookSpecificOutput: &geminiSpecific{HookEventName: geminiBeforeToolEvt, ToolInput: updated}}, nil
}

// rawJSONString is s as a JSON string, & < > as they are.
func rawJSONString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// geminiShellDir is the directory a shell call runs in: its dir_path
// (directory in older releases), from the event's cwd, else the cwd. The
// hook reads it to refuse a call whose directory is not a string; the
// wrapped command runs wherever Gemini starts it (see --policy-dir).
func geminiShellDir(ev claudeEvent) (string, error) {
	dir := ev.Cwd
	for _, field := range []string{"dir_path", "directory"} {
		d, err := inputString(ev, field, true)
		if err != nil {
			return "", err
		}
		if d != "" {
			dir = absFrom(ev.Cwd, d)
		}
	}
	return dir, nil
}

// absFrom is p made absolute from dir.
func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// geminiFile judges every path a file tool's call names, as `fence
// check` judges it; the first refused one denies the call.
func geminiFile(pol *policy.Policy, ev claudeEvent) (*geminiAnswer, error) {
	t := geminiFileTools[ev.ToolName]
	paths, err := geminiPaths(ev, t)
	if err != nil {
		return nil, err
	}
	ans, err := geminiJudgePaths(pol, ev.Cwd, t.access, paths)
	if ans != nil || err != nil || !t.recursive {
		return ans, err
	}
	if ans, err := geminiJudgeTrees(pol, ev.Cwd, paths); ans != nil || err != nil {
		return ans, err
	}
	return geminiSearchFiles(pol, ev, paths[0])
}

// geminiSearchFiles judges what a search may read below dir through
// links when it falls back to its own glob (no git repository or git,
// no grep on the PATH, or a grep that failed): that glob goes through
// links, git grep and grep -r follow none, and which one runs is
// Gemini's choice, not the event's. The include glob is not taken to
// narrow it (see linkRefusal).
func geminiSearchFiles(pol *policy.Policy, ev claudeEvent, dir string) (*geminiAnswer, error) {
	reason, err := linkRefusal(pol, newResolver(ev.Cwd), absFrom(ev.Cwd, dir))
	return geminiDenyFor(reason), err
}

// geminiPaths are the paths a file tool's call names: each field that
// gives one, the cwd where an optional path is left out, and the fixed
// leading directories of its globs, from the directory searched.
func geminiPaths(ev claudeEvent, t geminiFileTool) ([]string, error) {
	var paths []string
	for _, f := range t.fields {
		p, err := inputString(ev, f, true)
		if err != nil {
			return nil, err
		}
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 && !t.optional {
		return nil, fmt.Errorf("%s event without a string tool_input.%s, so the call is refused", ev.ToolName, t.fields[0])
	}
	if len(paths) == 0 {
		paths = []string{ev.Cwd}
	}
	base := absFrom(ev.Cwd, paths[0])
	for _, f := range t.globs {
		g, err := inputString(ev, f, true)
		if err != nil {
			return nil, err
		}
		if g != "" {
			paths = append(paths, globRoots(base, g)...)
		}
	}
	return paths, nil
}

// geminiReadMany judges the paths and globs of a read_many_files call
// (include, or paths in older releases) by their fixed leading
// directories, from the cwd, and by the denyRead rules below those (it
// reads every file its globs match there), then by every file its globs
// match on disk (see globMatchRefusal). Gemini runs each glob in
// every workspace directory; the event names only the cwd (the hooks
// reference's base input has no workspace list), so a directory added
// with --include-directories is not judged here: the shell, which runs
// under fence, is where such a policy holds.
func geminiReadMany(pol *policy.Policy, ev claudeEvent) (*geminiAnswer, error) {
	var paths, globs []string
	for _, field := range []string{"include", "paths"} {
		v, ok := ev.ToolInput[field]
		if !ok {
			continue
		}
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, fmt.Errorf("%s event whose tool_input.%s is not a list of strings, so the call is refused", ev.ToolName, field)
		}
		for _, g := range list {
			slashed := strings.ReplaceAll(g, `\`, "/") // as Gemini reads it
			paths = append(paths, globRoots(ev.Cwd, g)...)
			paths = append(paths, globRoots(ev.Cwd, slashed)...)
			globs = append(globs, slashed)
			if e, ok := homeExpanded(strings.TrimFunc(slashed, jsSpace), pol.Home); ok {
				globs = append(globs, e)
			}
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s event without a path in tool_input.include, so the call is refused", ev.ToolName)
	}
	if ans, err := geminiJudgeTrees(pol, ev.Cwd, paths); ans != nil || err != nil {
		return ans, err
	}
	reason, err := globMatchRefusal(pol, newResolver(ev.Cwd), []string{ev.Cwd}, globs)
	return geminiDenyFor(reason), err
}

// geminiJudgeTrees denies a call reading the files below its paths when
// any of them, or a denyRead rule below it, is refused (see
// recursiveRefusal), naming the first.
func geminiJudgeTrees(pol *policy.Policy, cwd string, paths []string) (*geminiAnswer, error) {
	res := newResolver(cwd)
	for _, p := range paths {
		if reason, err := recursiveRefusal(pol, res, p); reason != "" || err != nil {
			return geminiDenyFor(reason), err
		}
	}
	return nil, nil
}

// geminiDenyFor is the answer denying a call for reason, nil for none.
func geminiDenyFor(reason string) *geminiAnswer {
	if reason == "" {
		return nil
	}
	return geminiDeny(reason)
}

// geminiJudgePaths denies a call when `fence check` refuses any of its
// paths in any spelling Gemini may open for it (see agentSpellings:
// Gemini's tools reference does not say how a path is read, so fence
// assumes the way Claude Code does), naming the first refused one.
func geminiJudgePaths(pol *policy.Policy, cwd, access string, paths []string) (*geminiAnswer, error) {
	res := newResolver(cwd)
	for _, p := range paths {
		if reason, err := pathRefusal(pol, res, access, p); reason != "" || err != nil {
			return geminiDenyFor(reason), err
		}
	}
	return nil, nil
}

// globRoots are the directories a glob reaches below, from dir: its
// fixed part from dir, and the fixed part as written when that starts
// with "~", which judging takes for the home directory too (see
// agentSpellings).
func globRoots(dir, glob string) []string {
	root := globRoot(glob)
	roots := []string{absFrom(dir, root)}
	if strings.HasPrefix(strings.TrimFunc(root, jsSpace), "~") {
		roots = append(roots, root)
	}
	return roots
}

// globRoot is the fixed part of a glob: its leading path elements up to
// the first with a wildcard (".", for a glob that starts with one). A
// search reaches below it only.
func globRoot(glob string) string {
	elems := strings.Split(filepath.ToSlash(glob), "/")
	for i, e := range elems {
		if strings.ContainsAny(e, `*?[{\`) {
			elems = elems[:i]
			break
		}
	}
	root := strings.Join(elems, "/")
	switch {
	case root == "" && strings.HasPrefix(glob, "/"):
		return "/"
	case root == "":
		return "."
	}
	return root
}

// geminiFetch judges every http(s) URL a web_fetch call holds (in its
// prompt, or its url where a release has one) as `fence check url`
// does; one the policy refuses, or whose host fence cannot tell, denies
// the call. A call without a URL is refused: Gemini would find none
// either, or fence has missed one.
func geminiFetch(pol *policy.Policy, ev claudeEvent) (*geminiAnswer, error) {
	var targets []string
	for _, field := range []string{"prompt", "url"} {
		s, err := inputString(ev, field, true)
		if err != nil {
			return nil, err
		}
		for _, raw := range promptURLs(s) {
			u, err := fetchTarget(raw)
			if err != nil {
				return nil, err
			}
			if u != "" {
				targets = append(targets, u)
			}
		}
	}
	if len(targets) == 0 {
		return nil, errors.New("web_fetch event without an http(s) URL in tool_input.prompt, so the call is refused")
	}
	for _, u := range targets {
		d, err := urlDecision(pol, u)
		if err != nil {
			return nil, err
		}
		if reason := refusal(d); reason != "" {
			return geminiDeny(reason), nil
		}
	}
	return nil, nil
}
