package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

func init() { hookRuntimes["cursor"] = (*hookOptions).cursor }

// cursorEvent is the part of a Cursor hook event fence reads: the fields
// every event carries, those of beforeShellExecution (command, cwd) and
// those of beforeReadFile (file_path, attachments).
type cursorEvent struct {
	HookEventName  string             `json:"hook_event_name"`
	WorkspaceRoots []string           `json:"workspace_roots"`
	Command        *string            `json:"command"`
	Cwd            string             `json:"cwd"`
	FilePath       *string            `json:"file_path"`
	Attachments    []cursorAttachment `json:"attachments"`
}

// cursorAttachment is a file Cursor attaches to a read; its path comes
// spelled either way.
type cursorAttachment struct {
	Type      string `json:"type"`
	FilePath  string `json:"file_path"`
	FilePath2 string `json:"filePath"`
}

// cursorAnswer is a Cursor hook's answer: the permission, the message
// shown to the user and the one given to the agent.
type cursorAnswer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// cursorJudged are the Cursor events fence judges. Cursor lets a
// beforeShellExecution hook allow, deny or ask, not change the command,
// so the hook only denies; it never runs a command under fence.
var cursorJudged = map[string]bool{"beforeShellExecution": true, "beforeReadFile": true}

// cursor answers one Cursor hook event. It writes nothing where Cursor's
// own permission flow is to decide: an event fence does not judge, a
// call the policy allows.
func (o *hookOptions) cursor(raw []byte, rerr error, stdout io.Writer) error {
	reason, err := guarded(func() (string, error) { return o.cursorDecide(raw, rerr) })
	if err != nil {
		reason = "fence: " + err.Error()
	}
	if reason == "" {
		return nil
	}
	return writeAnswer(stdout, cursorAnswer{Permission: "deny", UserMessage: reason, AgentMessage: reason}, true)
}

// cursorDecide is the reason the event's call is refused, "" for none;
// an error refuses it too (fail closed).
func (o *hookOptions) cursorDecide(raw []byte, rerr error) (string, error) {
	if rerr != nil {
		return "", rerr
	}
	var name struct {
		HookEventName string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(raw, &name); err == nil && name.HookEventName != "" && !cursorJudged[name.HookEventName] {
		return "", nil // an event fence does not judge, whatever its fields
	}
	var ev cursorEvent
	err := parseHookEvent(raw, &ev, "Cursor")
	if err != nil {
		return "", err
	}
	if ev.HookEventName == "" {
		// fence's entries are under the events it judges, and Cursor names
		// every event: one without a name is not to be let through.
		return "", errors.New("the hook event has no hook_event_name, so the call is refused")
	}
	dir, err := cursorDir(ev)
	if err != nil {
		return "", err
	}
	need := needLinks
	if ev.HookEventName == "beforeShellExecution" {
		need = needNoDisk
	}
	pol, err := o.loadFor(dir, need)
	if err != nil {
		return "", fmt.Errorf("the policy for %s: %w", dir, err)
	}
	if ev.HookEventName == "beforeShellExecution" {
		if ev.Command == nil || *ev.Command == "" {
			return "", errors.New("beforeShellExecution event without a command, so the call is refused")
		}
		reason, _ := o.shellRefusal(pol, selfPath(), dir, *ev.Command, "the hook judges every command by its own policy, not by the rules another fence command line gives")
		return reason, nil
	}
	return o.cursorRead(pol, dir, ev)
}

// cursorDir is the directory the call is judged from: the command's cwd,
// else the first workspace root; it must be absolute.
func cursorDir(ev cursorEvent) (string, error) {
	dir := ev.Cwd
	if dir == "" && len(ev.WorkspaceRoots) > 0 {
		dir = ev.WorkspaceRoots[0]
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%s event without an absolute cwd or workspace root (%q), so the call is refused", ev.HookEventName, dir)
	}
	return filepath.Clean(dir), nil
}

// cursorRead judges the file a beforeReadFile event reads, and every
// file attached to it, as `fence check read` does, in every spelling
// Cursor may open for it (see agentSpellings: Cursor's documentation
// does not say how it reads a path, so fence assumes the way Claude
// Code does); the first refused one denies the read. A file below
// another workspace root than the one dir is, in any spelling or where
// its links lead, is judged by that root's policy as well: a multi-root
// workspace has a policy per root.
func (o *hookOptions) cursorRead(pol *policy.Policy, dir string, ev cursorEvent) (string, error) {
	if ev.FilePath == nil || *ev.FilePath == "" {
		return "", errors.New("beforeReadFile event without a file_path, so the read is refused")
	}
	paths := []string{*ev.FilePath}
	for _, a := range ev.Attachments {
		for _, p := range []string{a.FilePath, a.FilePath2} {
			if p != "" {
				paths = append(paths, p) // whatever its type: a rule may be attached
			}
		}
	}
	res := newResolver(dir)
	policies := map[string]*policy.Policy{dir: pol}
	for _, p := range paths {
		if reason, err := pathRefusal(pol, res, "read", p); reason != "" || err != nil {
			return reason, err
		}
		for _, target := range cursorTargets(pol, res, p) {
			root := cursorRootOf(ev.WorkspaceRoots, target)
			if root == "" || root == dir {
				continue
			}
			other, ok := policies[root]
			if !ok {
				var err error
				if other, err = o.loadFor(root, needLinks); err != nil {
					return "", fmt.Errorf("the policy for %s: %w", root, err)
				}
				policies[root] = other
			}
			if reason, err := pathRefusal(other, newResolver(root), "read", target); reason != "" || err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}

// cursorTargets are the absolute paths a read of p may open: each of
// its spellings (see agentSpellings) from the directory judged, and
// where its links lead. Each is judged by the policy of the workspace
// root it lies below.
func cursorTargets(pol *policy.Policy, res *resolver, p string) []string {
	var out []string
	for _, s := range agentSpellings(p, pol.Home) {
		abs := absFrom(res.dir, s)
		out = append(out, abs, res.resolve(abs))
	}
	return out
}

// cursorRootOf is the workspace root an absolute path lies below, the
// deepest one; "" for a relative path or one below none.
func cursorRootOf(roots []string, p string) string {
	best := ""
	for _, r := range roots {
		if !filepath.IsAbs(r) || !filepath.IsAbs(p) {
			continue
		}
		r = filepath.Clean(r)
		if rel, err := filepath.Rel(r, filepath.Clean(p)); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && len(r) > len(best) {
			best = r
		}
	}
	return best
}
