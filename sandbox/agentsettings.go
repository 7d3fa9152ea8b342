package sandbox

import (
	"path/filepath"
	"slices"

	"github.com/fence-sandbox/fence/policy"
)

// AgentSettingsTrees are where a run under p could leave agent settings
// that an agent started there later reads (see
// policy.ProtectAgentSettings). deep are the writable part of the
// workspace, which FindRepos walks already (its listings are in disk):
// settings up to two levels below its top there. top are the other writable trees
// and each directory above the workspace root inside one (the parent a
// user starts an agent in to work on several repositories): settings at
// their top. A level below the top of a temporary tree
// (/tmp/other/.claude) is not looked at: that is hundreds of directories
// to list on every run (a run took twice as long with it), and a cache
// (~/.cache, ~/go/pkg/mod) is looked at only at its top for the same
// reason.
func AgentSettingsTrees(p *policy.Policy, disk *Disk) (deep, top []string) {
	workspace := policy.WorkspaceRoot(p.Dir)
	add := func(list *[]string, t string) {
		if !slices.Contains(*list, t) {
			*list = append(*list, t)
		}
	}
	for _, w := range writableTrees(p, disk) {
		if under(w, workspace) {
			add(&deep, w)
			continue
		}
		add(&top, w)
		if under(workspace, w) {
			add(&deep, workspace)
			for d := filepath.Dir(workspace); under(d, w); d = filepath.Dir(d) {
				add(&top, d)
				if d == w {
					break
				}
			}
		}
	}
	return deep, top
}
