package linux

import "github.com/fence-sandbox/fence/sandbox"

// wire is what the supervisor sends the init over the plan pipe.
type wire struct {
	Plan *sandbox.Plan
	// Env is sent apart because Plan keeps it out of JSON.
	Env []string
	// Namespaces is false in the Landlock-only fallback.
	Namespaces bool
	// Foreground makes the command the terminal's foreground job.
	Foreground bool
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
