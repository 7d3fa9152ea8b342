package cmd

import (
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// protectRepos adds to pol the control files of every repository a run
// under it could write into, as found on disk now: the same protections
// for the sandbox and for `fence check`.
func protectRepos(pol *policy.Policy, res *policy.Resolved) error {
	budget := sandbox.DefaultGlobBudget
	if pol.GlobBudgetMs != 0 {
		budget = time.Duration(pol.GlobBudgetMs) * time.Millisecond
	}
	repos, err := sandbox.FindRepos(pol, budget)
	if err != nil {
		return err
	}
	pol.ProtectRepos(repos, res.Config.Filesystem.AllowGitConfig)
	return nil
}
