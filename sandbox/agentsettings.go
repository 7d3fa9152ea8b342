package sandbox

import (
	"path/filepath"
	"slices"

	"github.com/fence-sandbox/fence/policy"
)

// AgentSettingsTrees are where a run under p could leave agent settings
// that an agent started there later reads (see
// policy.ProtectAgentSettings). deep are the writable part of the
// workspace, which FindRepos walks whole already (its listings are in
// disk): settings at any depth there. top are the other writable trees
// and each directory above the workspace root inside one (the parent a
// user starts an agent in to work on several repositories): settings at
// their top. oneDown are the temporary trees the run may write, where
// other projects live (/tmp/other): settings one level below their top
// as well. A cache (~/.cache, ~/go/pkg/mod) is looked at only at its
// top: no one starts an agent in one, and a level down is hundreds of
// directories to list on every run.
func AgentSettingsTrees(p *policy.Policy, disk *Disk) (deep, top, oneDown []string) {
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
		if slices.ContainsFunc(TempTrees, func(t string) bool { return under(w, t) }) {
			add(&oneDown, w)
		}
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
	return deep, top, oneDown
}
