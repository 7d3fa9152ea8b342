package linux

import (
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// wire is what the supervisor sends the init over the plan pipe.
type wire struct {
	Plan *sandbox.Plan
	// Source is the plan as NewPlan made it, which Plan is derived from
	// with what the run chose (Runtime.Plan): never written, never sent.
	Source *sandbox.Plan `json:"-"`
	// Env is sent apart because Plan keeps it out of JSON: the plan's,
	// with what the run chose (see sandbox.Runtime.Env).
	Env []string
	// Runtime is what the run chose and who hears its denials: the
	// supervisor's alone, never sent.
	Runtime *sandbox.Runtime `json:"-"`
	// Namespaces is false in the Landlock-only fallback.
	Namespaces bool
	// Foreground makes the command the terminal's foreground job.
	Foreground bool
	// NoListener, in a run nested in a fence sandbox whose supervisor
	// holds the only seccomp listener a process may have, installs none:
	// this run then judges neither connect() nor listen() (see
	// nested_linux.go).
	NoListener bool `json:"noListener,omitempty"`
}

// recorder is who hears the run's denials (nil for none).
func (w *wire) recorder() *sandbox.Recorder {
	if w.Runtime == nil {
		return nil
	}
	return w.Runtime.Recorder
}

// The init learns its role from argv[0] and finds its pipes at fixed fds.
const (
	initArg0   = "fence-init"
	planFD     = 3 // supervisor -> init: the wire, JSON
	statusFD   = 4 // init -> supervisor: one status byte
	keptFD     = 5 // the first --keep-fd descriptor; the others follow
	statusOK   = 'R'
	statusNoNS = 'U' // the user namespace grants no capabilities
)

// forInit is the wire as the init gets it: without what only people read
// (glob counts, warnings, the seccomp summary, the names taken out of the
// environment) and what only the supervisor uses (watched paths, the
// proxies' rules). The init decodes it on the way of every start, so the
// less it holds the sooner the command runs.
func (w *wire) forInit() *wire {
	p := *w.Plan
	p.Globs, p.Warnings, p.Seccomp, p.EnvRemoved, p.Watch, p.Worktrees, p.Gitlinks = nil, nil, nil, nil, nil, nil, nil
	p.ExecRules, p.Rules, p.LandlockOnly = nil, sandbox.Rules{}, nil
	if p.Proxy != nil {
		proxy := *p.Proxy
		proxy.AllowedDomains, proxy.DeniedDomains, proxy.SSH, proxy.Upstream = nil, nil, policy.SSHPolicy{}, nil
		p.Proxy = &proxy
	}
	out := *w
	out.Plan = &p
	return &out
}
