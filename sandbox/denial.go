package sandbox

import (
	"sync"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// The layers at which fence refuses something while a command runs.
const (
	LayerPreflight = "preflight" // the command line, before anything starts
	LayerExec      = "exec"      // an execve inside the sandbox (runtimeExecPolicy argv)
	LayerNetwork   = "network"   // a connection through the proxies
)

// Denial is one refusal fence observed, in the shape of a `fence check`
// decision: the rule, the pattern as written and the file that holds it.
type Denial struct {
	Time  time.Time `json:"time"`
	Layer string    `json:"layer"`
	policy.Decision
}

// Recorder collects the denials of one run and hands each to Sink as it
// happens. A nil *Recorder records nothing. It is safe for concurrent use:
// the proxies and the exec judge report from their own goroutines.
type Recorder struct {
	Policy *policy.Policy
	// Sink, when set, hears about each denial at once (the audit log).
	Sink func(Denial)

	mu      sync.Mutex
	denials []Denial
}

// Command records a blocked command at layer.
func (r *Recorder) Command(layer string, v Verdict) {
	if r == nil || !v.Blocked {
		return
	}
	r.add(layer, v.Decision())
}

// Network records a refused connection to target (host:port).
func (r *Recorder) Network(proto, target string, d policy.NetDecision) {
	if r == nil {
		return
	}
	r.add(LayerNetwork, r.Policy.NetworkDecision(proto, target, target, d))
}

func (r *Recorder) add(layer string, d policy.Decision) {
	den := Denial{Time: time.Now().UTC(), Layer: layer, Decision: d}
	r.mu.Lock()
	r.denials = append(r.denials, den)
	r.mu.Unlock()
	if r.Sink != nil {
		r.Sink(den)
	}
}

// Denials returns what was recorded so far, in order.
func (r *Recorder) Denials() []Denial {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Denial{}, r.denials...)
}

// Decision is the verdict in the shape of a `fence check` decision.
func (v Verdict) Decision() policy.Decision {
	d := policy.Decision{Allowed: !v.Blocked, Access: "command", Requested: v.Command, Rule: "command"}
	switch {
	case v.Rule != nil:
		d.Rule, d.Pattern, d.Source = "command.deny", &v.Rule.Text, v.Rule.Origin
		if v.Rule.Builtin {
			d.Rule = "command.useDefaults"
		}
	case v.Reason != "":
		d.Rule, d.Suggestion = "ssh", v.Reason
	case v.Blocked:
		d.Rule, d.Suggestion = "command.dynamic", v.Message()
	}
	return d
}
