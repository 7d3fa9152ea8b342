package cmd

import (
	"fmt"
	"io"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// prepareOnDisk fixes what pol means on the disk as it is now, the same
// for the sandbox and for `fence check`: allow rules are resolved through
// their symlinks, and one that leads through a link out of a writable
// tree (this run's, or one an earlier run could write: see
// writableHistory) is dropped with a warning; the control files of every
// repository a run could write into are protected, and so is where the
// links of every path fence always protects lead, and agent settings
// anywhere an agent could later be started on them. What was read on the
// way is returned for the plan's own walks and after-run checks.
func prepareOnDisk(pol *policy.Policy, res *policy.Resolved, opts policy.Options, stderr io.Writer) (*sandbox.Disk, error) {
	disk, err := resolveLinks(pol, opts, stderr)
	if err != nil {
		return nil, err
	}
	found, err := sandbox.FindRepos(pol, sandbox.Budget(pol), disk)
	if err != nil {
		return nil, err
	}
	pol.ProtectRepos(found.Repos, res.Config.Filesystem.AllowGitConfig)
	pol.ProtectGitNamed(found.UserNamed)
	pol.ProtectUnlisted(found.Unlisted)
	pol.ProtectNewGit(found.NewGit)
	pol.ProtectAgentSettings(sandbox.AgentSettingsTrees(pol, disk))
	pol.ProtectLinked(sandbox.LinkedProtections(pol))
	return disk, nil
}

// resolveLinks is the first half of prepareOnDisk: the rules resolved
// through their links, the links out of writable trees dropped. What a
// read is allowed depends on no more than that; the repositories found
// after it add write protections only.
func resolveLinks(pol *policy.Policy, opts policy.Options, stderr io.Writer) (*sandbox.Disk, error) {
	disk := sandbox.NewDisk()
	disk.AddLinkTrees(historyOf(opts).trees())
	dropped, err := sandbox.GuardLinks(pol, disk)
	if err != nil {
		return nil, err
	}
	for _, d := range dropped {
		fmt.Fprintf(stderr, "fence: warning: %s\n", d)
	}
	return disk, nil
}
