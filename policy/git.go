package policy

import (
	"path"
	"slices"
)

// GitRepo is a repository found on disk whose control files the sandbox
// must keep: everything git takes configuration or code from. Paths are
// absolute.
type GitRepo struct {
	// WorkTree is the directory holding the .git entry; empty for a bare
	// repository.
	WorkTree string `json:"workTree,omitempty"`
	// Gitfile is the work tree's .git when it is a file ("gitdir: ..."),
	// as in linked worktrees and submodules.
	Gitfile string `json:"gitfile,omitempty"`
	// GitDirs are the repository's own git directory and its linked
	// worktrees' (CommonDir/worktrees/*). A submodule's git directory
	// (CommonDir/modules/...) is a repository of its own.
	GitDirs []string `json:"gitDirs"`
	// CommonDir is where the shared config, hooks and info live: the
	// git directory, unless its commondir file points elsewhere.
	CommonDir string `json:"commonDir"`
	// Named are the files and directories the configuration git reads
	// for this repository names as things to read or run (core.hooksPath,
	// include.path, a filter's script...).
	Named []GitNamed `json:"named,omitempty"`
}

// GitNamed is a path git configuration names, and what names it
// ("core.hooksPath in /w/.git/config").
type GitNamed struct {
	Path string `json:"path"`
	By   string `json:"by"`
}

// The rule keys of git's control files.
const (
	KeyGitConfig  = "mandatory.gitConfig"
	KeyGitControl = "mandatory.gitControl"
)

// Origins of the rules ProtectRepos adds.
const (
	originGitConfig  = "always protected: git configuration (set filesystem.allowGitConfig to lift)"
	originGitControl = "always protected: git runs or follows it (hooks, commondir and gitdir links, attributes, alternates)"
	originNewGit     = "always protected: a .git created here would be the repository of the working directory"
	originUnlisted   = "always protected: a directory fence could not search for repositories (its owner could open it again)"
)

// gitCommonFiles are read from a repository's common directory (see
// gitrepository-layout(5)): config (aliases, core.fsmonitor,
// core.hooksPath, filters, pagers, editors, credential helpers...),
// hooks, info/attributes (which choose filter and diff drivers),
// info/exclude (which could hide a planted file from git status),
// info/grafts (history rewritten under every command), and
// objects/info/alternates (other object stores read as the
// repository's own). The rest of info/ is git's own output
// (update-server-info writes info/refs on every repack).
var gitCommonFiles = []struct{ name, key string }{
	{"config", KeyGitConfig},
	{"hooks", KeyGitControl},
	{"info/attributes", KeyGitControl},
	{"info/exclude", KeyGitControl},
	{"info/grafts", KeyGitControl},
	{"objects/info/alternates", KeyGitControl},
}

// gitOwnFiles are read from every git directory, a linked worktree's
// included: config.worktree (with extensions.worktreeConfig), commondir
// (where the shared config and hooks are) and gitdir (a worktree's link
// back to its work tree).
var gitOwnFiles = []struct{ name, key string }{
	{"config.worktree", KeyGitConfig},
	{"commondir", KeyGitControl},
	{"gitdir", KeyGitControl},
}

// ProtectRepos adds write protections for the control files of repos:
// the configuration files (unless allowGitConfig) and what git runs or
// follows (never lifted). A protected path that does not exist is
// watched by the sandbox and moved aside if the command creates it.
func (p *Policy) ProtectRepos(repos []GitRepo, allowGitConfig bool) {
	have := map[string]bool{}
	for _, r := range p.DenyWrite {
		have[r.Pattern] = true
	}
	add := func(pattern, key string) {
		if have[pattern] || key == KeyGitConfig && allowGitConfig {
			return
		}
		have[pattern] = true
		origin := originGitControl
		if key == KeyGitConfig {
			origin = originGitConfig
		}
		p.DenyWrite = append(p.DenyWrite, Rule{Pattern: pattern, Glob: hasGlob(pattern), Origin: origin, Key: key, Source: "fence (always protected)"})
	}
	for _, repo := range repos {
		if repo.Gitfile != "" {
			add(repo.Gitfile, KeyGitControl)
		}
		for _, f := range gitCommonFiles {
			add(path.Join(repo.CommonDir, f.name), f.key)
		}
		for _, dir := range repo.GitDirs {
			for _, f := range gitOwnFiles {
				add(path.Join(dir, f.name), f.key)
			}
		}
		p.ProtectGitNamed(repo.Named)
	}
}

// ProtectGitNamed keeps read-only what git configuration names as a thing
// git reads or runs: a hooks directory in the work tree (husky's), an
// included config file, a filter's script. Never lifted: with it writable
// the command would not need the config.
func (p *Policy) ProtectGitNamed(named []GitNamed) {
	for _, n := range named {
		if slices.ContainsFunc(p.DenyWrite, func(r Rule) bool { return r.Pattern == n.Path }) {
			continue
		}
		p.DenyWrite = append(p.DenyWrite, Rule{Pattern: n.Path, Glob: hasGlob(n.Path), Origin: "always protected: git reads or runs it (" + n.By + ")", Key: KeyGitControl, Source: "fence (always protected)"})
	}
}

// ProtectUnlisted keeps read-only the directories of the workspace fence
// could not list when it looked for repositories: one could hold a
// repository whose control files would otherwise be open, and its owner,
// the command, could make it listable again.
func (p *Policy) ProtectUnlisted(dirs []string) {
	for _, d := range dirs {
		p.DenyWrite = append(p.DenyWrite, Rule{Pattern: d, Glob: hasGlob(d), Origin: originUnlisted, Key: KeyGitControl, Source: "fence (always protected)"})
	}
}

// ProtectNewGit watches paths where a .git the command created would make
// a repository of its own around the working directory, where the host's
// git would find it first: the sandbox moves one created there aside.
func (p *Policy) ProtectNewGit(paths []string) {
	for _, g := range paths {
		p.DenyWrite = append(p.DenyWrite, Rule{Pattern: g, Glob: hasGlob(g), Origin: originNewGit, Key: KeyGitControl, Source: "fence (always protected)"})
	}
}
