// Package cmd holds fence's command-line interface: one cobra command per
// file, each parsing its flags into an options struct and calling into
// policy or sandbox. It is the only package that prints.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/darwin"
	"github.com/fence-sandbox/fence/internal/stagetime"
	"github.com/fence-sandbox/fence/linux"
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// Execute runs fence with the process arguments and exits with its status.
func Execute() {
	stagetime.Mark("main")
	code := runArgs(os.Args[1:], os.Stdout, os.Stderr)
	stagetime.Mark("exit")
	stagetime.Flush()
	os.Exit(code)
}

// Main runs fence with args and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	return runArgs(args, stdout, stderr)
}

// runArgs runs fence with args and returns the exit status.
func runArgs(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(hookAlias(args))
	ran, err := root.ExecuteC()
	if err != nil && ran.Name() == "hook" {
		// An agent runs the tool call when its hook fails in most other
		// ways; exit 2 is the failure every supported agent takes for a
		// refusal, with stderr as the reason.
		report(err, stderr)
		return hookFailed
	}
	return report(err, stderr)
}

// hookFailed is the exit status of a `fence hook` that could not answer
// (a flag it does not know, no agent named): a refusal to the agents.
const hookFailed = 2

// subcommands are the names of fence's subcommands, cobra's help and
// completion included (a test keeps the list whole).
var subcommands = []string{"check", "completion", "config", "doctor", "help", "hook", "hooks", "import", "plan", "ssh-proxy", "templates"}

// runsCommand guesses, before the command line is parsed, whether args
// run a command: flags and their values, then `--` or -c, and no
// subcommand or --keep-fd (whose descriptors the init is started with)
// before that. A wrong guess costs time only: the init is started again
// or ended unused.
func runsCommand(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--", a == "-c", strings.HasPrefix(a, "--command"):
			return true
		case strings.HasPrefix(a, "--keep-fd"), slices.Contains(subcommands, a):
			return false
		}
	}
	return false
}

// exitError ends fence with a status other than 125; msg may be empty when
// everything was already said.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "fence: %s\n", ee.msg)
		}
		return ee.code
	}
	var ue *untrustedError
	if errors.As(err, &ue) {
		ue.print(stderr)
		return sandbox.ExitFenceError
	}
	fmt.Fprintf(stderr, "fence: error: %v\n", err)
	return sandbox.ExitFenceError
}

type runOptions struct {
	policy   *policyFlags
	shell    string   // -c
	monitor  bool     // -m
	ports    []string // -p
	degraded string   // --degraded
	report   string   // --report
	audit    string   // --audit
	keepFDs  []int    // --keep-fd
	limits   limitFlags
	up       upstreamFlags // --shell, --expose-host-path, --fence-log-file, ...
	stderr   io.Writer
	// policyDir is --policy-dir (see anchorPolicy).
	policyDir string
	// auditSink writes the audit log, once the policy names one.
	auditSink *auditSink
	// noPlanCache is --no-plan-cache; flags are the parsed flags, whose
	// values are part of the plan cache's key.
	noPlanCache bool
	flags       *pflag.FlagSet
	// resumeGC turns the collector back on (see pauseGC); nil when it
	// was not paused.
	resumeGC func()
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{policy: &policyFlags{stderr: stderr}, stderr: stderr, up: upstreamFlags{stdout: stdout}}
	return rootFor(o, stdout, stderr)
}

// rootFor is the root command, running commands with o.
func rootFor(o *runOptions, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "fence [flags] -- command [args...]\n  fence [flags] -c 'shell string'",
		Short: "Run a command inside a kernel-enforced sandbox",
		Long: "fence runs a command inside a sandbox described by a fence.jsonc policy.\n" +
			"Run \"fence config show\" to see the policy that applies here.",
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o.flags = c.Flags()
			return o.run(args)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("fence {{.Version}}\n")
	root.Flags().SetInterspersed(false) // flags after the command belong to it
	o.policy.register(root)
	f := root.Flags()
	f.StringVarP(&o.shell, "command", "c", "", "run this string through a shell inside the sandbox")
	f.BoolVarP(&o.monitor, "monitor", "m", false, "report each connection the proxies refuse as it happens, and a count at exit")
	f.StringArrayVarP(&o.ports, "port", "p", nil, "expose a sandbox port on the host loopback, as [ADDR:]PORT (repeatable)")
	f.StringVar(&o.degraded, "degraded", "refuse", "when the kernel cannot enforce all of the policy: refuse, or warn and run")
	f.StringVar(&o.report, "report", "", "write a JSON report to `FILE` at exit: the command, its exit code, the policy chain and every denial fence saw")
	o.limits.register(f)
	f.IntSliceVar(&o.keepFDs, "keep-fd", nil, "pass descriptor `N` on to the command at the same number (repeatable); fence closes every other one but 0-2")
	f.StringVar(&o.audit, "audit", "", "append one JSON line per denial to `FILE` (as audit.file in the policy does), rotated daily")
	f.StringVar(&o.policyDir, "policy-dir", "", "apply the policy as a run started in `DIR` would (config, relative rules, workspace) while -c runs here: how the agent hooks wrap commands")
	o.up.register(f)
	f.BoolVar(&o.noPlanCache, "no-plan-cache", false, "load and plan afresh, neither taking nor keeping a cached plan (as "+planCacheOff+"=1)")
	root.AddCommand(newConfigCmd(o.policy, stdout, stderr), newTemplatesCmd(stdout), newPlanCmd(o.policy, stdout), newDoctorCmd(stdout), newSSHProxyCmd(os.Stdin, stdout), newCheckCmd(o.policy, os.Stdin, stdout))
	root.AddCommand(newHooksCmd(o.policy, stdout, stderr))
	root.AddCommand(newHookCmd(o.policy, stdout, stderr))
	root.AddCommand(newImportCmd(o.policy, stdout, stderr))
	return root
}

func (o *runOptions) run(args []string) error {
	if done, err := o.up.alias(args, o.shell); done {
		return err
	}
	closeLog, err := o.openLog()
	if err != nil {
		return err
	}
	defer closeLog()
	if o.report == "" {
		err := o.execute(args, nil)
		return endWithLost(err, o.auditSink.lost(), o.stderr)
	}
	rep := newRunReport(args, o.shell)
	err = o.execute(args, rep)
	lost := o.auditSink.lost()
	err = endWithLost(err, lost, o.stderr)
	rep.finish(err)
	if lost != nil && rep.Error == "" {
		rep.Error = lost.Error()
	}
	if werr := rep.write(o.report); werr != nil {
		err = endWithLost(err, fmt.Errorf("report %s: %w", o.report, werr), o.stderr)
	}
	return err
}

// execute runs the command, filling in rep (which may be nil) as it goes.
func (o *runOptions) execute(args []string, rep *runReport) error {
	if err := o.checkFlags(args); err != nil {
		return err
	}
	if err := o.anchorPolicy(); err != nil {
		return err
	}
	stagetime.Mark("parsed")
	o.resumeGC = pauseGC()
	defer o.resumeGC()
	cache := newPlanCache(o.flags, o.noPlanCache, o.up.shell)
	defer cache.drop()
	l, err := o.load(args, cache)
	if err != nil {
		return err
	}
	stagetime.Mark("loaded")
	pol := l.pol
	rec, err := o.recorder(pol, rep)
	if err != nil {
		return err
	}
	if rep != nil {
		rep.Chain, rep.rec = l.chain, rec
	}
	if v := preflightRun(pol, args, o.shell, l.us); v.Blocked {
		rec.Command(sandbox.LayerPreflight, v)
		return &exitError{code: sandbox.ExitFenceError, msg: v.Message()}
	}
	popts, sizes, err := o.planOptions(args, pol, l.us)
	if err != nil {
		return err
	}
	plan, err := o.planRun(cache, l, popts)
	if err != nil {
		return err
	}
	stagetime.Mark("planned")
	o.limits.notes(plan, sizes, o.policy.debug, o.stderr)
	rt := &sandbox.Runtime{Recorder: rec, Started: o.resumeGC}
	removeRuntimeDir, err := hostRuntimeDir(plan, rt)
	if err != nil {
		return err
	}
	defer removeRuntimeDir()
	for _, w := range plan.Warnings {
		fmt.Fprintf(o.stderr, "fence: warning: %s\n", w)
	}
	if o.policy.debug {
		printPlanDebug(o.stderr, pol, plan)
		printTempEnvDebug(o.stderr, plan, rt)
	}
	guards := guardAgentConfigs(pol, o.policy.debug, o.stderr)
	defer guards.close()
	var digest string
	if o.policy.debug {
		digest = planDigest(plan)
	}
	var code int
	switch runtime.GOOS {
	case "linux":
		code, err = linux.Run(plan, rt, o.stderr)
	case "darwin":
		o.resumeGC() // the macOS runner does not call rt.Started
		code, err = darwin.Run(plan, rt, o.stderr)
	default:
		return fmt.Errorf("refusing to run %q: fence has no sandbox for %s, and never runs a command unsandboxed", strings.Join(plan.Argv, " "), runtime.GOOS)
	}
	if o.policy.debug {
		checkPlanUnchanged(o.stderr, digest, plan)
	}
	// Whatever the exit: a command killed by --timeout or Ctrl-C had
	// time to write too.
	guards.check(o.stderr)
	if err != nil {
		return err
	}
	if !l.allowGitConfig && sandbox.WritesGitConfig(args, o.shell) {
		// A shell line can go on after git failed, so this is said
		// whatever the exit code.
		fmt.Fprintf(o.stderr, "fence: hint: if git could not write a repository's config (\"Device or resource busy\"), that is fence: it keeps the config of the repositories that existed at start read-only (rule %s), since git configuration can make the host's git run code; set filesystem.allowGitConfig to lift it, or run that git command outside fence\n", policy.KeyGitConfig)
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// checkFlags refuses a run its flags cannot make, before anything starts.
func (o *runOptions) checkFlags(args []string) error {
	if o.shell == "" && len(args) == 0 {
		return errors.New("no command given: use \"fence -- command args\" or \"fence -c 'shell string'\"")
	}
	if o.degraded != "refuse" && o.degraded != "warn" {
		return fmt.Errorf("--degraded %q: want refuse or warn", o.degraded)
	}
	if err := sandbox.CheckKeepFDs(o.keepFDs, fdOpen); err != nil {
		return err
	}
	return o.limits.check()
}

// prepareHost does what the run needs of the host before it is planned:
// the notes and warnings on the policy, the refusal of a policy that
// could rewrite the links fence reads its own state through, the missing
// cache directories, what earlier runs left behind (the returned Disk),
// and the record of the trees this run may write.
func (o *runOptions) prepareHost(pol *policy.Policy, res *policy.Resolved, opts policy.Options) (*sandbox.Disk, error) {
	noteRun(o.stderr, res, opts)
	if err := guardConfigLinks(pol, opts); err != nil {
		return nil, err
	}
	createHomeDirs(pol, o.policy.debug, o.stderr)
	disk, err := prepareOnDisk(pol, res, opts, o.stderr)
	if err != nil {
		return nil, err
	}
	if err := historyOf(opts).record(pol); err != nil {
		recordFailed(err, o.policy.debug, o.stderr)
	}
	return disk, nil
}

// recorder collects denials when a report or an audit log wants them,
// and is nil otherwise. An audit log fence cannot open stops the run:
// the policy asked for a record of every denial.
func (o *runOptions) recorder(pol *policy.Policy, rep *runReport) (*sandbox.Recorder, error) {
	if rep == nil && pol.AuditFile == "" {
		return nil, nil
	}
	rec := &sandbox.Recorder{Policy: pol}
	if pol.AuditFile != "" {
		log, err := sandbox.OpenAudit(pol.AuditFile)
		if err != nil {
			return nil, err
		}
		o.auditSink = &auditSink{log: log, stderr: o.stderr}
		rec.Sink = o.auditSink.append
	}
	return rec, nil
}

// planOptions are what the run's flags put into its plan: the command
// (through the user's shell, with us), --monitor, --keep-fd, the -p
// ports, and the limits, with the sizes of /tmp and /dev/shm that
// tmpfsNotes explains; and the Landlock-only engine's rules when the
// system will not let this user create user namespaces.
func (o *runOptions) planOptions(args []string, pol *policy.Policy, us *sandbox.UserShell) (sandbox.Options, linux.TmpfsSizes, error) {
	po := sandbox.Options{Argv: args, Shell: o.shell, Degraded: o.degraded, Monitor: o.monitor, KeepFDs: o.keepFDs,
		LandlockOnly: linux.UserNamespacesBlocked()}
	if us != nil {
		po.Argv, po.Shell = us.Argv(o.shell), ""
	}
	for _, p := range o.ports {
		f, err := sandbox.ParseForward(p)
		if err != nil {
			return po, linux.TmpfsSizes{}, err
		}
		po.Forwards = append(po.Forwards, f)
	}
	limits, sizes := o.limits.planned(pol.Limits)
	po.Limits = &limits
	return po, sizes, nil
}

// preflight judges the command line before anything starts.
func preflight(pol *policy.Policy, argv []string, shell string) sandbox.Verdict {
	if shell != "" {
		return sandbox.PreflightShell(pol, shell)
	}
	return sandbox.PreflightArgv(pol, argv)
}

// fdOpen reports whether fence was given descriptor n: it is open and
// not close-on-exec. Every descriptor fence (and the Go runtime, which
// keeps a few) opens itself is close-on-exec, and one the caller passed
// could not be, or it would not have reached fence.
func fdOpen(n int) bool {
	flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
	return err == nil && flags&unix.FD_CLOEXEC == 0
}

// recordFailed reports a writable-tree record fence could not make. In a
// fence sandbox the record is the outer run's, made before it started:
// this run can write only what the outer one may, so the failure (its
// config directory is read-only there) costs nothing and says so under
// -d alone.
func recordFailed(err error, debug bool, stderr io.Writer) {
	if linux.InFenceSandbox() {
		if debug {
			fmt.Fprintf(stderr, "fence: debug: history: not recorded (%v): inside a fence sandbox, whose own run recorded the trees it may write\n", err)
		}
		return
	}
	fmt.Fprintf(stderr, "fence: warning: record the trees this run may write: %v; a later run would trust a link this one plants in them\n", err)
}
