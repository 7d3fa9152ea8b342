package sandbox

import (
	"fmt"
	"sync"

	"github.com/fence-sandbox/fence/policy"
)

// Refusals counts the connections the proxies refused during a run and
// keeps the first, for the one line fence prints at exit (see Summary).
// The zero value is ready; it is safe for concurrent use.
type Refusals struct {
	mu    sync.Mutex
	n     int
	first policy.Decision
}

// Add counts one refusal, d in the shape of a `fence check` decision.
func (r *Refusals) Add(d policy.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		r.first = d
	}
	r.n++
}

// Summary is the line that says how many connections were refused, the
// first of them with its rule, and what would allow it; empty when none
// was.
func (r *Refusals) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return ""
	}
	what := "1 connection"
	if r.n > 1 {
		what = fmt.Sprintf("%d connections, the first", r.n)
	}
	rule := r.first.Rule
	if r.first.Pattern != nil {
		rule += fmt.Sprintf(" %q", *r.first.Pattern)
	}
	return fmt.Sprintf("the proxies refused %s to %s (%s): %s; -m names each, --no-refusal-summary or network.refusalSummary: false silences this line", what, r.first.Requested, rule, r.first.Suggestion)
}
