package cmd

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// upstreamFlags are the run flags a user of the bubblewrap-based fence
// already types: the -c shell, host paths in the private /tmp, the log
// file, and the two listings spelled as flags.
type upstreamFlags struct {
	shell         shellFlags
	expose        exposeFlags
	logFile       string // --fence-log-file
	listTemplates bool   // --list-templates: fence templates
	linuxFeatures bool   // --linux-features: fence doctor
	newSession    bool   // --force-new-session: forceNewSession for this run
	stdout        io.Writer
	logPath       string // logFile, absolute, once open
}

func (u *upstreamFlags) register(f *pflag.FlagSet) {
	u.shell.register(f)
	u.expose.register(f)
	f.StringVar(&u.logFile, "fence-log-file", "", "append fence's -d lines and -m monitor lines to `FILE` (0600, never through a link) instead of stderr; errors and warnings stay on stderr")
	f.BoolVar(&u.listTemplates, "list-templates", false, "list the builtin templates (as \"fence templates\") and exit")
	f.BoolVar(&u.linuxFeatures, "linux-features", false, "report what this kernel lets fence enforce (as \"fence doctor\") and exit")
	f.BoolVar(&u.newSession, "force-new-session", false, "run the command in a session of its own, with no controlling terminal and no job control (as forceNewSession in the policy; Linux)")
}

// alias runs --list-templates or --linux-features when one is given, and
// reports whether it did.
func (u *upstreamFlags) alias(args []string, shell string) (bool, error) {
	if !u.listTemplates && !u.linuxFeatures {
		return false, nil
	}
	switch {
	case u.listTemplates && u.linuxFeatures:
		return true, errors.New("give --list-templates or --linux-features, not both")
	case len(args) > 0 || shell != "":
		return true, errors.New("--list-templates and --linux-features list and exit; they run no command")
	case u.listTemplates:
		return true, newTemplatesCmd(u.stdout).RunE(nil, nil)
	}
	return true, newDoctorCmd(u.stdout).RunE(nil, nil)
}

// openLog points the run's messages through a splitter that sends the
// debug and monitor lines to --fence-log-file, when it is given; the
// returned function closes it.
func (o *runOptions) openLog() (func(), error) {
	if o.up.logFile == "" {
		return func() {}, nil
	}
	f, abs, err := openFenceLog(o.up.logFile)
	if err != nil {
		return nil, err
	}
	o.up.logPath = abs
	s := &logSplitter{stderr: o.stderr, log: f, monitor: o.monitor}
	stderr := o.stderr
	o.stderr, o.policy.stderr = s, s
	return func() {
		s.Close()
		o.stderr, o.policy.stderr = stderr, stderr
	}, nil
}

// apply adds what the flags change in the compiled policy (the exposed
// paths, the log's protection, a session of the command's own) and
// returns the shell that runs the -c string, nil for the default.
func (u *upstreamFlags) apply(pol *policy.Policy, src string, argv []string, dir string) (*sandbox.UserShell, error) {
	pol.ForceNewSession = pol.ForceNewSession || u.newSession
	us, err := u.shell.resolve(src, argv)
	if err != nil {
		return nil, err
	}
	if u.logPath != "" {
		protectFenceLog(pol, u.logPath) // first: no exposed path makes it writable
	}
	paths, err := u.expose.paths(dir)
	if err != nil {
		return nil, err
	}
	return us, expose(pol, paths)
}
