package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

// hookOptions are the flags of `fence hook`: the agent, and the policy
// flags (-s, -t, the rule flags) the hook judges with and passes on to
// every command it wraps.
type hookOptions struct {
	policy  *policyFlags
	flagged map[string]*bool // --AGENT-pre-tool-use, by agent
	stderr  io.Writer
}

// hookRuntime answers one event of an agent: the raw event, the error
// reading it, and where the answer goes.
type hookRuntime func(o *hookOptions, raw []byte, rerr error, stdout io.Writer) error

// hookRuntimes are the agents `fence hook` answers, by name; each agent's
// file adds its own.
var hookRuntimes = map[string]hookRuntime{}

// hookNames are the agents of hookRuntimes, sorted.
func hookNames() []string { return slices.Sorted(maps.Keys(hookRuntimes)) }

// upstreamHookFlag is the root flag that settings written by upstream
// fence call the agent's hook with.
func upstreamHookFlag(agent string) string { return "--" + agent + "-pre-tool-use" }

// maxEvent bounds the event a hook reads: a Write carries the whole
// file, and an event that does not fit is refused, not cut short.
const maxEvent = 64 << 20

func newHookCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	o := &hookOptions{policy: pf, stderr: stderr, flagged: map[string]*bool{}}
	names := hookNames()
	c := &cobra.Command{
		Use:   "hook " + strings.Join(names, "|"),
		Short: "Answer an agent's tool-call hook: read its event on stdin, deny what the policy refuses, run shell calls under fence",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			agent, err := o.agent(args)
			if err != nil {
				return err
			}
			answer, ok := hookRuntimes[agent]
			if !ok {
				return fmt.Errorf("hook %q: no such agent; want one of %s", agent, strings.Join(names, ", "))
			}
			event, rerr := readEvent(c.InOrStdin())
			return answer(o, event, rerr, stdout)
		},
	}
	for _, name := range names {
		o.flagged[name] = c.Flags().Bool(upstreamHookFlag(name)[2:], false, fmt.Sprintf("answer the agent's event as \"fence hook %s\" does", name))
	}
	return c
}

// agent is the agent named by the argument or the upstream flag.
func (o *hookOptions) agent(args []string) (string, error) {
	var flagged []string
	for _, name := range hookNames() {
		if *o.flagged[name] {
			flagged = append(flagged, name)
		}
	}
	switch {
	case len(flagged) > 1:
		return "", fmt.Errorf("%s and %s name two agents", upstreamHookFlag(flagged[0]), upstreamHookFlag(flagged[1]))
	case len(args) == 1 && len(flagged) == 1 && args[0] != flagged[0]:
		return "", fmt.Errorf("hook %s and --%s-pre-tool-use name two agents", args[0], flagged[0])
	case len(args) == 1:
		return args[0], nil
	case len(flagged) == 1:
		return flagged[0], nil
	}
	return "", fmt.Errorf("name the agent: fence hook %s", strings.Join(hookNames(), "|"))
}

// hookAlias turns upstream's entry point (fence --claude-pre-tool-use
// [flags]) into fence hook AGENT [flags]. Only fence's own flags, before
// any command, are looked at.
func hookAlias(args []string) []string {
	for i, a := range args {
		if a == "--" || a == "-c" || slices.Contains(subcommands, a) {
			return args
		}
		agent, ok := strings.CutSuffix(strings.TrimPrefix(a, "--"), "-pre-tool-use")
		if _, known := hookRuntimes[agent]; ok && known && strings.HasPrefix(a, "--") {
			return append([]string{"hook", agent}, slices.Delete(slices.Clone(args), i, i+1)...)
		}
	}
	return args
}

// guarded runs decide with a panic turned into an error, so into a
// denial: an agent takes a hook that dies for a failed one, and some
// (Codex, Cursor) then run the call.
func guarded[T any](decide func() (T, error)) (ans T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var none T
			ans, err = none, fmt.Errorf("fence failed while judging the call (%v), so it is refused", r)
		}
	}()
	return decide()
}

// writeAnswer writes v, an agent's answer, as one line of JSON; with
// escapeHTML false, & < > stay as they are (a command's && readable).
func writeAnswer(stdout io.Writer, v any, escapeHTML bool) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode the answer: %w", err)
	}
	_, err := stdout.Write(b.Bytes())
	return err
}

// readEvent reads the whole event, refusing one larger than maxEvent.
func readEvent(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxEvent+1))
	if err != nil {
		return nil, fmt.Errorf("read the event: %w", err)
	}
	if len(b) > maxEvent {
		return nil, fmt.Errorf("the event is larger than %d bytes", maxEvent)
	}
	return b, nil
}

// diskNeed is how much of the policy's meaning on the disk a decision
// depends on.
type diskNeed int

const (
	// needNoDisk: a shell command or a URL, judged by the command and
	// network rules; the command runs under a fence that prepares the
	// disk itself.
	needNoDisk diskNeed = iota
	// needLinks: a read, judged by rules resolved through their links.
	needLinks
	// needAll: a write, judged by those and the control files of the
	// repositories found.
	needAll
)

// needFor is the diskNeed of a file access: "read" or "write".
func needFor(access string) diskNeed {
	if access == "read" {
		return needLinks
	}
	return needAll
}

// loadIn loads the policy as a run in dir would (config discovery from
// dir, trust, the policy flags), and fixes its meaning on the disk as
// `fence check` does.
func (o *hookOptions) loadIn(dir string) (*policy.Policy, error) {
	return o.loadFor(dir, needAll)
}

// loadFor is loadIn that fixes only as much of the policy's meaning on
// the disk as the decision depends on: a hook answers once per tool call.
func (o *hookOptions) loadFor(dir string, need diskNeed) (*policy.Policy, error) {
	opts, err := o.policy.options()
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.Settings != "" {
		opts.Settings, _ = filepath.Abs(opts.Settings)
	}
	res, err := policy.Load(opts)
	if err != nil {
		return nil, err
	}
	if err := hookPolicyFiles(opts, res); err != nil {
		return nil, err
	}
	problems, err := checkTrust(opts, res)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		var b bytes.Buffer
		(&untrustedError{problems}).print(&b)
		return nil, errors.New(string(bytes.TrimSpace(b.Bytes())))
	}
	if err := res.Apply(o.policy.rules, opts.Dir); err != nil {
		return nil, err
	}
	pol := compileResolved(res, opts)
	switch need {
	case needLinks:
		_, err = resolveLinks(pol, opts, o.stderr)
	case needAll:
		_, err = prepareOnDisk(pol, res, opts, o.stderr)
	}
	if err != nil {
		return nil, err
	}
	return pol, nil
}

// wrapArgs are the policy flags a wrapped command is run with: the
// hook's own, the settings file made absolute.
func (o *hookOptions) wrapArgs() []string {
	p := o.policy
	var out []string
	if p.settings != "" {
		abs, err := filepath.Abs(p.settings)
		if err != nil {
			abs = p.settings
		}
		out = append(out, "-s", abs)
	}
	if p.template != "" {
		out = append(out, "-t", p.template)
	}
	r := p.rules
	for _, l := range []struct {
		flag string
		vals []string
	}{
		{"--allow-read", r.AllowRead}, {"--allow-write", r.AllowWrite}, {"--deny-read", r.DenyRead}, {"--deny-write", r.DenyWrite},
		{"--allow-domain", r.AllowDomains}, {"--deny-domain", r.DenyDomains}, {"--deny-command", r.DenyCommands},
	} {
		for _, v := range l.vals {
			out = append(out, l.flag, v)
		}
	}
	if r.NoNetwork {
		out = append(out, "--no-network")
	}
	if r.NoRefusalSummary {
		out = append(out, "--no-refusal-summary")
	}
	if r.Mode != "" {
		out = append(out, "--mode", r.Mode)
	}
	return out
}

// hookPolicyFlags are the flags by which a fence command line chooses
// its policy; an agent's own fence command may not give them.
var hookPolicyFlags = []string{
	"-s", "--settings", "-t", "--template", "--allow-read", "--allow-write", "--deny-read", "--deny-write",
	"--allow-domain", "--deny-domain", "--deny-command", "--no-network", "--no-refusal-summary", "--mode", "--policy-dir",
}

// selfPath is the running fence's absolute path, for the commands a hook
// wraps.
func selfPath() string {
	exe, err := os.Executable()
	if err != nil {
		return "fence"
	}
	return exe
}
