package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/darwin"
	"github.com/fence-sandbox/fence/linux"
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

func newPlanCmd(pf *policyFlags, stdout io.Writer) *cobra.Command {
	var shell, platform string
	var landlockOnly bool
	c := &cobra.Command{
		Use:   "plan [flags] [-- command args...]",
		Short: "Print the sandbox plan without running anything: JSON for linux, the Seatbelt profile for darwin",
		RunE: func(c *cobra.Command, args []string) error {
			if shell == "" && len(args) == 0 {
				args = []string{"true"}
			}
			opts := sandbox.Options{Argv: args, Shell: shell, Degraded: "refuse",
				LandlockOnly: landlockOnly || linux.UserNamespacesBlocked()}
			plan, err := planOrCached(pf, c.Flags(), opts)
			if err != nil {
				return err
			}
			switch platform {
			case "linux":
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(plan)
			case "darwin":
				return printDarwinPlan(stdout, plan)
			}
			return fmt.Errorf("--platform %q: want linux or darwin", platform)
		},
	}
	c.Flags().StringVarP(&shell, "command", "c", "", "plan for this shell string")
	c.Flags().StringVar(&platform, "platform", runtime.GOOS, "linux or darwin")
	c.Flags().BoolVar(&landlockOnly, "landlock-only", false, "on linux, add the rules of the Landlock-only engine, which runs where this user cannot create user namespaces (added anyway when this system's settings say so)")
	return c
}

// planOrCached is the plan `fence plan` prints: on a plan cache hit the
// cached one, as a run with these flags here would take it, else a fresh
// one; it says which on w first (see sayCached).
func planOrCached(pf *policyFlags, flags *pflag.FlagSet, opts sandbox.Options) (*sandbox.Plan, error) {
	if plan := sayCached(pf.stderr, flags); plan != nil {
		plan, err := plan.WithCommand(opts)
		if err != nil || !opts.LandlockOnly {
			return plan, err
		}
		return sandbox.WithLandlockOnly(plan), nil
	}
	pol, disk, err := compilePolicy(pf)
	if err != nil {
		return nil, err
	}
	return planFor(pol, disk, opts)
}

// printDarwinPlan prints the sandbox-exec command line and the profile
// compiled from the plan, or returns why the macOS backend would refuse
// to run it (exit 125, as the run would). The proxy ports and the TMPDIR
// are the run's; the plan shows the policy's ports and a placeholder
// directory.
func printDarwinPlan(w io.Writer, plan *sandbox.Plan) error {
	o := darwin.ProfileOptions{TmpDir: "/private/var/folders/fence-XXXXXX", SSHAuthSock: os.Getenv("SSH_AUTH_SOCK")}
	if plan.Proxy != nil {
		o.HTTPPort, o.SOCKSPort = plan.Proxy.HTTPPort, plan.Proxy.SOCKSPort
	}
	profile, _, err := darwin.ProfileFor(plan, o)
	if err != nil {
		return fmt.Errorf("on macOS: %w", err)
	}
	argv, _ := json.Marshal(append([]string{"/usr/bin/sandbox-exec", "-p", "PROFILE", "--"}, plan.Argv...))
	_, err = fmt.Fprintf(w, "; argv: %s\n%s", argv, profile)
	return err
}

// buildPlan loads the policy and plans the command for this process.
func buildPlan(pf *policyFlags, argv []string, shell, degraded string) (*sandbox.Plan, error) {
	pol, disk, err := compilePolicy(pf)
	if err != nil {
		return nil, err
	}
	return planFor(pol, disk, sandbox.Options{Argv: argv, Shell: shell, Degraded: degraded})
}

// compilePolicy loads the policy and fixes its meaning for this directory
// and this disk; the listings it read are for planFor.
func compilePolicy(pf *policyFlags) (*policy.Policy, *sandbox.Disk, error) {
	res, opts, err := pf.load()
	if err != nil {
		return nil, nil, err
	}
	pol := compileResolved(res, opts)
	disk, err := prepareOnDisk(pol, res, opts, pf.stderr)
	return pol, disk, err
}

// compileResolved fixes the meaning of a loaded policy for this directory.
func compileResolved(res *policy.Resolved, opts policy.Options) *policy.Policy {
	return policy.Compile(res.Config, policy.Env{
		Dir: opts.Dir, Root: policy.WorkspaceRoot(opts.Dir), Home: opts.Home, UserConfigDir: opts.UserConfigDir, ConfigFiles: res.Files, UpstreamCredentialFiles: res.CredentialFiles, NoNetwork: res.NoNetwork,
		Origin: originOf(res), Position: positionOf(res), Firm: res.FromCommandLine,
		DataHome: os.Getenv("XDG_DATA_HOME"), StateHome: os.Getenv("XDG_STATE_HOME"),
		PathDirs: policy.PathDirs(os.Getenv("PATH")), FenceBinary: fenceBinary(), FenceInvoked: invokedAs, PlanCacheDirs: planCacheDirs(),
		WSL: sandbox.IsWSL(), AgentHomes: policy.AgentHomes(os.Getenv, opts.Dir),
	})
}

// fenceBinary is the running fence, symlinks resolved; empty when unknown.
func fenceBinary() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := inputs.EvalSymlinks(exe); err == nil {
		return resolved
	}
	return exe
}

// invokedAs is the path this fence was run by, taken when the process
// starts: a relative one means the working directory of that moment.
var invokedAs = fenceInvoked(os.Args[0])

// fenceInvoked is the absolute path fence was run by, its symlinks not
// resolved: arg0 made absolute against the working directory when it
// names a path, else the PATH entry it was found in; empty when unknown.
func fenceInvoked(arg0 string) string {
	if !strings.Contains(arg0, "/") {
		found, err := exec.LookPath(arg0)               // observed: invokedAs is in the plan cache key
		if err != nil && !errors.Is(err, exec.ErrDot) { // found through "." on PATH: still the path it ran by
			return ""
		}
		arg0 = found
	}
	abs, err := filepath.Abs(arg0)
	if err != nil {
		return ""
	}
	return abs
}

// originOf names where a list entry of the loaded policy was written.
func originOf(res *policy.Resolved) func(key, value string) string {
	return func(key, value string) string {
		if o, ok := res.Origin(key, value); ok {
			return o.Source.Label()
		}
		return ""
	}
}

// positionOf says where a list entry of the loaded policy was written,
// as FILE:LINE:COL ("builtin template: NAME:LINE:COL" for a template's),
// "" when no file holds it.
func positionOf(res *policy.Resolved) func(key, value string) string {
	return func(key, value string) string {
		o, ok := res.Origin(key, value)
		if !ok || o.Pos.Line == 0 {
			return ""
		}
		if o.Source.Path == "" {
			return o.String()
		}
		return fmt.Sprintf("%s:%d:%d", o.Source.Path, o.Pos.Line, o.Pos.Col)
	}
}

// planFor plans the command of o (and what the run's flags add to it)
// under a compiled policy, for this process.
func planFor(pol *policy.Policy, disk *sandbox.Disk, o sandbox.Options) (*sandbox.Plan, error) {
	o.Disk, o.Environ, o.UID, o.GID = disk, os.Environ(), os.Getuid(), os.Getgid()
	o.FenceBinary, o.SSHProxy, o.Seccomp = fenceBinary(), true, linux.SeccompSummary()
	return sandbox.NewPlan(pol, o)
}

// printPlanDebug prints the plan for -d, one line per decision.
func printPlanDebug(w io.Writer, pol *policy.Policy, p *sandbox.Plan) {
	fmt.Fprintf(w, "fence: debug: plan: argv %q in %s, network %s\n", p.Argv, p.Dir, p.Network)
	if p.NewSession {
		fmt.Fprintf(w, "fence: debug: session: the command runs in a session of its own (forceNewSession): it has no controlling terminal (/dev/tty does not open) and no job control: Ctrl-Z does not stop it, Ctrl-C ends it as fence passes the signal on\n")
	}
	for _, b := range p.Mounts.Binds {
		mode := "read-only"
		if b.Write {
			mode = "writable"
		}
		fmt.Fprintf(w, "fence: debug: mounts: %s %s (%s)\n", mode, b.Path, b.Why)
	}
	for _, m := range p.Mounts.Masks {
		fmt.Fprintf(w, "fence: debug: mounts: hidden %s (%s)\n", m.Path, m.Why)
	}
	for _, l := range p.Mounts.Links {
		fmt.Fprintf(w, "fence: debug: mounts: link %s -> %s made again in the private /tmp (%s)\n", l.Path, l.Target, l.Why)
	}
	for _, r := range p.Landlock.Rules {
		fmt.Fprintf(w, "fence: debug: landlock: %s %s (%s)\n", r.Access, r.Path, r.Why)
	}
	for _, g := range p.Globs {
		cut := ""
		if g.Cut {
			cut = ", cut short by the time budget"
		}
		fmt.Fprintf(w, "fence: debug: globs: %s matched %d paths%s\n", g.Rule, g.Matches, cut)
	}
	hidden := 0
	for _, m := range p.Mounts.Masks {
		if m.Socket {
			hidden++
		}
	}
	if abi := linux.KernelLandlockABI(); abi < 9 {
		fmt.Fprintf(w, "fence: debug: network: %d host unix sockets the policy does not list are masked (those bound at start); Landlock ABI %d cannot refuse one bound later or by a relative path (ABI 9 can)\n", hidden, abi)
	} else {
		fmt.Fprintf(w, "fence: debug: network: Landlock refuses every unix socket the policy does not list and the sandbox did not make; %d host sockets are masked as well\n", hidden)
	}
	if p.Network == "host" && len(p.Proxy.DeniedDomains) > 0 {
		fmt.Fprintf(w, "fence: debug: network: the host's network is shared (allowedDomains has \"*\"), so deniedDomains binds only clients that use the proxies\n")
	}
	fmt.Fprintf(w, "fence: debug: network: %s\n", bindingDebug(p))
	printUpstreamDebug(w, p)
	if len(p.Seccomp) > 0 {
		fmt.Fprintf(w, "fence: debug: seccomp: EPERM for %s\n", strings.Join(p.Seccomp, ", "))
	}
	if len(p.EnvRemoved) > 0 {
		fmt.Fprintf(w, "fence: debug: env: removed %s\n", envRemovedText(pol, p.EnvRemoved))
	}
}

// envRemovedText names the variables taken out of the environment (never
// their values), grouped by the rule that took them, rules in the order
// they first apply: `GH_TOKEN, github_token by env.deny "*TOKEN"
// (builtin template: read-only); LD_PRELOAD by fence (...)`.
func envRemovedText(pol *policy.Policy, names []string) string {
	var rules []string
	byRule := map[string][]string{}
	for _, n := range names {
		rule := envRuleText(pol, n)
		if _, ok := byRule[rule]; !ok {
			rules = append(rules, rule)
		}
		byRule[rule] = append(byRule[rule], n)
	}
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = strings.Join(byRule[r], ", ") + " by " + r
	}
	return strings.Join(parts, "; ")
}

// envRuleText names the rule that removes the variable name and where
// that rule was written.
func envRuleText(pol *policy.Policy, name string) string {
	pattern, _ := sandbox.EnvRemoval(name, pol.EnvDeny, pol.EnvAllow)
	if pattern == sandbox.LoaderRule {
		return pattern
	}
	if src := pol.EnvSource("env.deny", pattern); src != "" {
		return fmt.Sprintf("env.deny %q (%s)", pattern, src)
	}
	return fmt.Sprintf("env.deny %q", pattern)
}
