package linux

import "github.com/fence-sandbox/fence/sandbox"

// wire is the run the supervisor lowers into the sandbox program: the
// plan and what the supervisor decides at run time.
type wire struct {
	Plan *sandbox.Plan
	// Source is the plan as NewPlan made it, which Plan is derived from
	// with what the run chose (Runtime.Plan): never written.
	Source *sandbox.Plan
	// Env is the command's environment: the plan's, with what the run
	// chose (see sandbox.Runtime.Env).
	Env []string
	// Runtime is what the run chose and who hears its denials: the
	// supervisor's alone, never sent.
	Runtime *sandbox.Runtime
	// Namespaces is false in the Landlock-only fallback.
	Namespaces bool
	// Foreground makes the command the terminal's foreground job.
	Foreground bool
	// NoListener, in a run nested in a fence sandbox whose supervisor
	// holds the only seccomp listener a process may have, installs none:
	// this run then judges neither connect() nor listen() (see
	// nested_linux.go).
	NoListener bool
}

// recorder is who hears the run's denials (nil for none).
func (w *wire) recorder() *sandbox.Recorder {
	if w.Runtime == nil {
		return nil
	}
	return w.Runtime.Recorder
}

// initArg0 is the command line of the sandbox's pid 1 (its argv area is
// rewritten to it), by which a run nested in the sandbox knows it.
const initArg0 = "fence-init"
