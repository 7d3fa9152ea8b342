package cmd

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

// claudeMatcher is the PreToolUse matcher of fence's Claude Code hook: the
// tools fence judges. Claude Code reads a matcher as a regular expression
// over the tool's name.
const claudeMatcher = "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|NotebookRead|Glob|Grep|LS|WebFetch"

// testOnlyFenceExe, when set by a test, is the fence binary the hook
// entry names instead of the running one.
var testOnlyFenceExe string

type hooksOptions struct {
	policy *policyFlags
	action string           // print, install or uninstall
	agents map[string]*bool // --AGENT, by agent
	file   string
}

// hooksAgent is what fence hooks needs to know of an agent: its hook's
// name, its user-level settings file (under the home directory), how to
// put fence's hook in and take it out, what install says it added, and
// the help of its flag.
type hooksAgent struct {
	name      string
	userFile  []string
	install   func(file string, src []byte, command, self string) ([]byte, error)
	uninstall func(file string, src []byte, self string) ([]byte, int, error)
	added     string
	help      string
}

// hooksAgents are the agents fence hooks installs for, by name; each
// agent's file adds its own.
var hooksAgents = map[string]hooksAgent{}

func init() {
	hooksAgents["claude"] = hooksAgent{"claude", []string{".claude", "settings.json"}, installClaudeHook, uninstallClaudeHook,
		"fence's PreToolUse hook for " + claudeMatcher, "Claude Code: a PreToolUse hook in ~/.claude/settings.json"}
}

// hooksNotes are, per agent, what install says after adding the hook:
// what the user must still do for the agent to run it.
var hooksNotes = map[string][]string{}

// hooksOff are, per agent, what says why the agent would not run
// fence's hook from its settings ("" when it would), for a warning.
var hooksOff = map[string]func(src []byte) string{
	"claude": func(src []byte) string {
		if hooksDisabled(src) {
			return "it sets disableAllHooks, so Claude Code runs no hook, fence's included"
		}
		return ""
	},
}

// agentHomeEnv names, for the agents that have one, the environment
// variable that moves the agent's directory (the first element of its
// userFile) elsewhere (see policy.AgentHomes); install then edits the
// file the agent reads.
var agentHomeEnv = map[string]string{"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "copilot": "COPILOT_HOME", "gemini": "GEMINI_CLI_HOME"}

// userSettings is the agent's user-level settings file: in the directory
// its variable moves it to when that is set (an error unless absolute:
// the agent would resolve it from wherever it runs), else below the home
// directory. moved is the variable that was used, or "".
func userSettings(agent hooksAgent) (path, moved string, err error) {
	if v := agentHomeEnv[agent.name]; v != "" && os.Getenv(v) != "" {
		if !filepath.IsAbs(os.Getenv(v)) {
			return "", "", fmt.Errorf("%s is %q, not an absolute path: name the settings file with --file", v, os.Getenv(v))
		}
		dir := policy.AgentHomes(func(k string) string {
			if k == v {
				return os.Getenv(k)
			}
			return ""
		}, "")[agent.userFile[0]]
		return filepath.Join(append([]string{dir}, agent.userFile[1:]...)...), v, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", "", fmt.Errorf("find home directory: %w", err)
	}
	return filepath.Join(append([]string{home}, agent.userFile...)...), "", nil
}

// hooksAgentFlags are the agents' flags, sorted, as usage shows them.
func hooksAgentFlags() string {
	var flags []string
	for _, name := range slices.Sorted(maps.Keys(hooksAgents)) {
		flags = append(flags, "--"+name)
	}
	return strings.Join(flags, "|")
}

func newHooksCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Put fence in front of a coding agent's tool calls through the agent's hooks",
	}
	shorts := map[string]string{
		"print":     "Show, as a diff, what install would change in the agent's settings, writing nothing",
		"install":   "Add fence's hook to the agent's settings (a second install changes nothing)",
		"uninstall": "Remove fence's hooks, and only those, from the agent's settings",
	}
	for _, action := range []string{"print", "install", "uninstall"} {
		o := &hooksOptions{policy: pf, action: action, agents: map[string]*bool{}}
		sub := &cobra.Command{
			Use:   action + " " + hooksAgentFlags() + " [--file PATH]",
			Short: shorts[action],
			Args:  cobra.NoArgs,
			RunE:  func(*cobra.Command, []string) error { return o.run(stdout, stderr) },
		}
		for _, name := range slices.Sorted(maps.Keys(hooksAgents)) {
			o.agents[name] = sub.Flags().Bool(name, false, hooksAgents[name].help)
		}
		sub.Flags().StringVar(&o.file, "file", "", "edit this settings file (such as a project's .claude/settings.json or .cursor/hooks.json) instead of the user's")
		c.AddCommand(sub)
	}
	return c
}

// agent is the agent the flags name: exactly one.
func (o *hooksOptions) agent() (hooksAgent, error) {
	var named []string
	for _, name := range slices.Sorted(maps.Keys(o.agents)) {
		if *o.agents[name] {
			named = append(named, name)
		}
	}
	switch len(named) {
	case 0:
		return hooksAgent{}, fmt.Errorf("say which agent's hooks: one of %s", hooksAgentFlags())
	case 1:
		return hooksAgents[named[0]], nil
	}
	return hooksAgent{}, fmt.Errorf("name one agent: --%s and --%s name two", named[0], named[1])
}

func (o *hooksOptions) run(stdout, stderr io.Writer) error {
	agent, err := o.agent()
	if err != nil {
		return err
	}
	path, err := o.settingsPath(agent, stderr)
	if err != nil {
		return err
	}
	e, err := readForEdit(path)
	if err != nil {
		return err
	}
	if err := refuseLink(path); err != nil {
		return err // made a link while fence read it
	}
	if e.old == nil {
		e.mode = 0o600
	}
	self, err := fenceExe()
	if err != nil {
		return err
	}
	if o.action == "uninstall" {
		return o.uninstall(agent, e, self, stderr)
	}
	if err := checkHookBinary(self); err != nil {
		return err
	}
	command, err := o.hookCommand(agent, self)
	if err != nil {
		return err
	}
	if e.new, err = agent.install(path, e.old, command, self); err != nil {
		return err
	}
	if off := hooksOff[agent.name]; off != nil {
		if why := off(e.new); why != "" {
			fmt.Fprintf(stderr, "fence: warning: %s: %s\n", path, why)
		}
	}
	if o.action == "print" {
		return printChange(stdout, stderr, e)
	}
	return o.install(agent, e, stderr)
}

func (o *hooksOptions) install(agent hooksAgent, e *configEdit, stderr io.Writer) error {
	if e.old != nil && string(e.new) == string(e.old) {
		fmt.Fprintf(stderr, "fence: %s already holds fence's hook: nothing changed\n", e.path)
		return nil
	}
	if e.old == nil {
		mode := os.FileMode(0o755)
		if o.file == "" {
			mode = 0o700
		}
		if err := os.MkdirAll(filepath.Dir(e.path), mode); err != nil {
			return fmt.Errorf("make the settings directory: %w", err)
		}
	}
	if err := e.commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: added %s to %s\n", agent.added, e.path)
	for _, note := range hooksNotes[agent.name] {
		fmt.Fprintf(stderr, "fence: note: %s\n", note)
	}
	reportBackup(e, stderr)
	return nil
}

func (o *hooksOptions) uninstall(agent hooksAgent, e *configEdit, self string, stderr io.Writer) error {
	if e.old == nil {
		fmt.Fprintf(stderr, "fence: %s does not exist: nothing to remove\n", e.path)
		return nil
	}
	out, removed, err := agent.uninstall(e.path, e.old, self)
	if err != nil {
		return err
	}
	if removed == 0 {
		fmt.Fprintf(stderr, "fence: %s holds no hook of fence's: nothing changed\n", e.path)
		return nil
	}
	e.new = out
	if err := e.commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: removed %d hook(s) of fence's from %s\n", removed, e.path)
	reportBackup(e, stderr)
	return nil
}

func reportBackup(e *configEdit, stderr io.Writer) {
	if e.backup != "" {
		fmt.Fprintf(stderr, "fence: the previous version is kept as %s\n", filepath.Base(e.backup))
	}
}

// settingsPath is the file to edit: --file, else the agent's user-level
// settings. A link there is refused (an edit would write where it leads,
// which may be anywhere); links among the directories on the way are
// resolved, and said. As root, a path another user owns or could lead
// elsewhere is refused, as named and as resolved (see checkRootEdit).
func (o *hooksOptions) settingsPath(agent hooksAgent, stderr io.Writer) (string, error) {
	path := o.file
	if path == "" {
		user, moved, err := userSettings(agent)
		if err != nil {
			return "", err
		}
		path = user
		if moved != "" {
			fmt.Fprintf(stderr, "fence: %s is set: editing %s\n", moved, path)
		}
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if err := checkRootEdit(path); err != nil {
		return "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil && dir != filepath.Dir(path) {
		real := filepath.Join(dir, filepath.Base(path))
		fmt.Fprintf(stderr, "fence: %s is %s (a directory on the way is a link)\n", path, real)
		path = real
		if err := checkRootEdit(path); err != nil {
			return "", err
		}
	}
	return path, refuseLink(path)
}

// refuseLink refuses a settings path that is a link.
func refuseLink(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return fmt.Errorf("refusing to edit %s: it is a link to %q; if that is the settings file you mean, name it with --file", path, target)
	}
	return nil
}

// hookCommand is the command the hook entry runs: this fence binary,
// by absolute path, with the policy flags given to install. Other rule
// flags are refused rather than dropped: the hook would judge by less
// than the user asked for.
func (o *hooksOptions) hookCommand(agent hooksAgent, exe string) (string, error) {
	if !reflect.ValueOf(o.policy.rules).IsZero() {
		return "", errors.New("fence hooks takes -s/--settings or -t/--template to choose the hook's policy; put other rules in that config file")
	}
	if o.policy.settings != "" && o.policy.template != "" {
		return "", errors.New("give --settings or --template, not both")
	}
	command := shellQuote(exe) + " hook " + agent.name
	if s := o.policy.settings; s != "" {
		abs, err := filepath.Abs(s)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("the hook's policy file: %w", err)
		}
		if err := o.hookFileWritable(abs); err != nil {
			return "", err
		}
		command += " --settings " + shellQuote(abs)
	}
	if t := o.policy.template; t != "" {
		command += " --template " + shellQuote(t)
	}
	return command, nil
}

// fenceExe is the absolute path of the running fence binary.
func fenceExe() (string, error) {
	if testOnlyFenceExe != "" {
		return testOnlyFenceExe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the fence binary: %w", err)
	}
	return exe, nil
}

// printChange shows what install would write: a unified diff of the
// file, or that nothing would change.
func printChange(stdout, stderr io.Writer, e *configEdit) error {
	if e.old != nil && string(e.new) == string(e.old) {
		fmt.Fprintf(stderr, "fence: %s already holds fence's hook: install would change nothing\n", e.path)
		return nil
	}
	_, err := io.WriteString(stdout, unifiedDiff(e.path, e.old, e.new))
	return err
}

// hookFileWritable refuses, at install, a policy file the hook would
// refuse on every call (see hookPolicyFiles): one in a tree a sandboxed
// run could write.
func (o *hooksOptions) hookFileWritable(abs string) error {
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	opts.Settings = abs
	return hookPolicyFiles(opts, &policy.Resolved{Files: []string{abs}})
}
