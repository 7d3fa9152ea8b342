package sandbox

import (
	"fmt"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// BudgetError is a protection fence could not finish finding on disk
// within the start-up budget: a deny glob whose walk stopped, or the
// search for repositories below a writable tree. The run refuses rather
// than start with the protection partly in place.
type BudgetError struct {
	Rule    string        // the rule, as its origin names it
	Stopped string        // the directory the walk was in
	Budget  time.Duration // the budget that ran out
	// Tree is set for the search for repositories below a writable tree,
	// which has no pattern to narrow.
	Tree string
}

func (e *BudgetError) Error() string {
	if e.Tree != "" {
		return fmt.Sprintf("the %s start-up budget ran out while fence was searching the writable tree %s for repositories (in %q), so it cannot protect the git control files of one it did not reach; "+
			"remove what does not belong there (a tree of many directories a command left behind), make less of it writable, or raise filesystem.globBudgetMs (at most %d)",
			e.Budget, e.Tree, e.Stopped, policy.MaxGlobBudgetMs)
	}
	return fmt.Sprintf("%s: the %s start-up budget ran out while fence was matching it against the disk (in %q), so it cannot cover every file the rule names; "+
		"narrow the pattern (a literal directory before \"**\", or fewer trees below it), or raise filesystem.globBudgetMs (at most %d)",
		e.Rule, e.Budget, e.Stopped, policy.MaxGlobBudgetMs)
}

// budget is the time the start-up walk may take under p and o.
func budget(p *policy.Policy, o Options) time.Duration {
	if o.GlobBudget != 0 {
		return o.GlobBudget
	}
	return Budget(p)
}

// Budget is the time each start-up walk may take under p
// (filesystem.globBudgetMs, else DefaultGlobBudget).
func Budget(p *policy.Policy) time.Duration {
	if p.GlobBudgetMs != 0 {
		return time.Duration(p.GlobBudgetMs) * time.Millisecond
	}
	return DefaultGlobBudget
}

// unfinishedDeny returns an error for the first deny rule whose walk the
// budget cut short; a cut allow rule only grants less, which fails closed
// by itself.
func (m *matcher) unfinishedDeny(p *policy.Policy, budget time.Duration) error {
	for _, list := range [][]policy.Rule{p.DenyRead, p.DenyWrite} {
		for _, r := range list {
			if g, ok := m.globs[globKey(r)]; ok && g.cut {
				return &BudgetError{Rule: r.Origin, Stopped: g.stopped, Budget: budget}
			}
		}
	}
	return nil
}
