package sandbox

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// shallowRepoDepth is how far below a writable tree outside the workspace
// (a cache, /tmp, the home) fence looks for repositories: /tmp/clone/.git
// is found under allowWrite ["/tmp"], /tmp/a/clone/.git is not. Every
// level costs a stat of each directory in it on every run (~/.cache
// alone holds hundreds at the second).
const shallowRepoDepth = 1

// FindRepos finds the repositories whose control files a run under p must
// keep: the one around the working directory and around each writable
// tree, every one below the writable part of the workspace (the work tree
// holding the working directory), and those near the top of every other
// writable tree. A search of the workspace the budget cuts short is an
// error: a repository it did not reach would be left open. Directories
// of the workspace fence may not list are returned too: the command,
// their owner, could open them again, so they must stay read-only.
// disk, which may be nil, keeps the listings for the plan's own walks.
func FindRepos(p *policy.Policy, budget time.Duration, disk *Disk) (*RepoSearch, error) {
	f := &repoFinder{deadline: time.Now().Add(budget), budget: budget, seen: map[string]bool{}, disk: disk, home: p.Home}
	f.readUserConfig()
	workspace := policy.WorkspaceRoot(p.Dir)
	f.around(p.Dir)
	for _, w := range writableTrees(p, disk) {
		f.around(w)
		var err error
		switch {
		case under(w, workspace):
			err = f.below(w, w)
		case under(workspace, w):
			err = f.below(workspace, w)
			f.near(w, shallowRepoDepth)
		default:
			f.near(w, shallowRepoDepth)
		}
		if err != nil {
			return nil, err
		}
	}
	newGit := append(newGitPaths(p, workspace, disk), f.uninitialized()...)
	found := &RepoSearch{Repos: f.repos, Unlisted: f.unlisted, NewGit: newGit, UserNamed: f.userNamed()}
	if disk != nil {
		disk.repos = found
	}
	return found, nil
}

// RepoSearch is what FindRepos found.
type RepoSearch struct {
	Repos []policy.GitRepo
	// Unlisted are directories below the workspace fence could not list.
	Unlisted []string
	// UserNamed are what the user's and the system's git configuration
	// name for git to read or run wherever it runs: included files and
	// absolute paths (relative ones are in each repository's Named).
	UserNamed []policy.GitNamed
	// NewGit are the .git paths, missing now, where a repository of the
	// command's would be one the host's git enters: in the working
	// directory and each directory above it, up to the work tree that
	// holds it (or the root), that the command may write; and in each
	// submodule's directory of a work tree found (the path .gitmodules
	// names) that is not checked out, whose gitlink git status follows.
	NewGit []string
}

func newGitPaths(p *policy.Policy, workspace string, disk *Disk) []string {
	trees := writableTrees(p, disk)
	var out []string
	for d := p.Dir; ; d = filepath.Dir(d) {
		if _, err := inputs.Lstat(filepath.Join(d, ".git")); err == nil {
			return out // the repository that holds the working directory
		}
		if slices.ContainsFunc(trees, func(t string) bool { return under(d, t) }) {
			out = append(out, filepath.Join(d, ".git"))
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// writableTrees are the existing trees p lets the command write, with
// their symlinks resolved.
func writableTrees(p *policy.Policy, disk *Disk) []string {
	var out []string
	for _, r := range p.Write {
		base := r.Pattern
		if r.Glob {
			base = literalPrefix(r.Pattern)
		}
		real := disk.canonical(base)
		if _, ok := disk.lookup(real); ok && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

type repoFinder struct {
	disk     *Disk
	home     string
	user     []gitEntry // the user's and the system's git config
	userInc  []string   // files they include
	deadline time.Time
	budget   time.Duration
	seen     map[string]bool // common dirs found
	repos    []policy.GitRepo
	unlisted []string // directories below the workspace fence could not list
}

// around adds the repository that holds dir, if any.
func (f *repoFinder) around(dir string) {
	for d := dir; ; d = filepath.Dir(d) {
		if f.addWorkTree(d) || d == filepath.Dir(d) {
			return
		}
	}
}

// below adds every repository below root, walking all of it; rule names
// the writable tree for the error when the budget runs out.
func (f *repoFinder) below(root, tree string) error {
	n := 0
	var stopped string
	f.disk.Walk(root, func(p string, d fs.DirEntry, err error) error {
		if n++; n%256 == 0 && time.Now().After(f.deadline) {
			inputs.Taint("the repository search ran out of time")
			stopped = filepath.Dir(p)
			return filepath.SkipAll
		}
		switch {
		case err != nil:
			if d != nil && d.IsDir() && errors.Is(err, fs.ErrPermission) && !slices.Contains(f.unlisted, reachable(p)) {
				f.unlisted = append(f.unlisted, reachable(p))
			}
			return nil
		case d.Name() == ".git":
			f.addWorkTree(filepath.Dir(p))
			if d.IsDir() {
				return filepath.SkipDir
			}
		case d.Name() == "HEAD" && !d.IsDir():
			f.addBare(filepath.Dir(p))
		}
		return nil
	})
	if stopped != "" {
		return &BudgetError{Tree: tree, Stopped: stopped, Budget: f.budget}
	}
	return nil
}

// near adds the repositories at most depth levels below tree (tree/a/.git
// for depth 1), learning from each listing whether a directory holds a
// .git, and stating .git only in the directories of the last level. It
// stops at the deadline: it is a search near the top, not a promise.
func (f *repoFinder) near(tree string, depth int) {
	dirs := []string{tree}
	for level := 0; level <= depth && len(dirs) > 0; level++ {
		var next []string
		for _, d := range dirs {
			if time.Now().After(f.deadline) {
				inputs.Taint("the repository search ran out of time")
				return
			}
			if level == depth {
				f.addWorkTree(d)
				continue
			}
			entries, _ := f.disk.ReadDir(d)
			if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == ".git" }) && f.addWorkTree(d) {
				continue
			}
			for _, e := range entries {
				if e.IsDir() {
					next = append(next, filepath.Join(d, e.Name()))
				}
			}
		}
		dirs = next
	}
}

// addWorkTree adds the repository whose work tree is dir, when dir holds
// a .git directory or gitfile.
func (f *repoFinder) addWorkTree(dir string) bool {
	entry := filepath.Join(dir, ".git")
	fi, err := inputs.Stat(entry)
	if err != nil {
		return false
	}
	repo := policy.GitRepo{WorkTree: dir}
	gitDir := entry
	if !fi.IsDir() {
		target, ok := readGitfile(entry)
		if !ok {
			return false
		}
		repo.Gitfile, gitDir = entry, target
	}
	f.add(repo, gitDir)
	return true
}

// addBare adds dir when it is a bare repository (HEAD, objects/ and
// refs/ with no work tree) that is not a .git directory found otherwise.
func (f *repoFinder) addBare(dir string) {
	if filepath.Base(dir) == ".git" || !isDir(filepath.Join(dir, "objects")) || !isDir(filepath.Join(dir, "refs")) {
		return
	}
	f.add(policy.GitRepo{}, dir)
}

// add completes repo from its git directory: the common directory, the
// linked worktrees, and the submodules as repositories of their own.
func (f *repoFinder) add(repo policy.GitRepo, gitDir string) {
	if real, err := inputs.EvalSymlinks(gitDir); err == nil {
		gitDir = real
	}
	repo.CommonDir = commonDir(gitDir)
	if f.seen[repo.CommonDir+"\x00"+repo.Gitfile] {
		return
	}
	f.seen[repo.CommonDir+"\x00"+repo.Gitfile] = true
	repo.GitDirs = []string{gitDir}
	if gitDir != repo.CommonDir {
		repo.GitDirs = append(repo.GitDirs, repo.CommonDir)
	}
	entries, _ := inputs.ReadDir(filepath.Join(repo.CommonDir, "worktrees"))
	for _, e := range entries {
		if wt := filepath.Join(repo.CommonDir, "worktrees", e.Name()); e.IsDir() && !slices.Contains(repo.GitDirs, wt) {
			repo.GitDirs = append(repo.GitDirs, wt)
		}
	}
	repo.Named = f.named(repo)
	f.repos = append(f.repos, repo)
	f.modules(filepath.Join(repo.CommonDir, "modules"), 0)
}

// readUserConfig reads the git configuration every repository of the
// user's shares: the system's and the user's files, as git finds them.
func (f *repoFinder) readUserConfig() {
	system := cmp.Or(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig")
	files := []string{system}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(xdg) {
			xdg = filepath.Join(f.home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git/config"), filepath.Join(f.home, ".gitconfig"))
	}
	for _, file := range files {
		f.user = append(f.user, readGitConfig(file, f.home, 0, &f.userInc)...)
	}
}

// userNamed are the included files and absolute paths of the user's and
// the system's configuration.
func (f *repoFinder) userNamed() []policy.GitNamed {
	var out []policy.GitNamed
	for _, inc := range f.userInc {
		out = append(out, policy.GitNamed{Path: inc, By: "an include of the user's git configuration"})
	}
	for _, n := range gitNamed(f.user, "", f.home) {
		if filepath.IsAbs(n.path) {
			out = append(out, policy.GitNamed{Path: n.path, By: n.by})
		}
	}
	return out
}

// named are the paths the configuration git reads for repo names: its own
// config files and what they include, with the user's, relative paths
// taken from the work tree (the git directory for a bare repository).
func (f *repoFinder) named(repo policy.GitRepo) []policy.GitNamed {
	var includes []string
	entries := slices.Clone(f.user)
	entries = append(entries, readGitConfig(filepath.Join(repo.CommonDir, "config"), f.home, 0, &includes)...)
	for _, dir := range repo.GitDirs {
		entries = append(entries, readGitConfig(filepath.Join(dir, "config.worktree"), f.home, 0, &includes)...)
	}
	base := cmp.Or(repo.WorkTree, repo.CommonDir)
	var out []policy.GitNamed
	for _, inc := range includes {
		out = append(out, policy.GitNamed{Path: inc, By: "an include of " + filepath.Join(repo.CommonDir, "config")})
	}
	for _, n := range gitNamed(entries, base, f.home) {
		out = append(out, policy.GitNamed{Path: n.path, By: n.by})
	}
	return out
}

// modules adds the submodules' git directories below dir, nested ones
// included (modules/a/modules/b).
func (f *repoFinder) modules(dir string, depth int) {
	entries, err := inputs.ReadDir(dir)
	if err != nil || depth > 16 {
		return
	}
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		switch {
		case !e.IsDir():
		case isFile(filepath.Join(sub, "HEAD")):
			f.add(policy.GitRepo{}, sub)
		default:
			f.modules(sub, depth+1) // a submodule named with slashes
		}
	}
}

// readGitfile returns the git directory a gitfile ("gitdir: PATH")
// points at, relative paths taken from the file's directory.
func readGitfile(path string) (string, bool) {
	b, err := inputs.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return filepath.Clean(target), true
}

// commonDir is where git takes the shared config and hooks of gitDir:
// what its commondir file names, else gitDir itself.
func commonDir(gitDir string) string {
	b, err := inputs.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil || len(b) > 4096 {
		return gitDir
	}
	dir := strings.TrimSpace(string(b))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	if real, err := inputs.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

func isDir(p string) bool {
	fi, err := inputs.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := inputs.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// worktreeWatches lists, for each repository found, the linked worktrees
// it has now.
func worktreeWatches(disk *Disk) []WorktreeWatch {
	if disk == nil || disk.repos == nil {
		return nil
	}
	var out []WorktreeWatch
	for _, r := range disk.repos.Repos {
		if slices.ContainsFunc(out, func(w WorktreeWatch) bool { return w.CommonDir == r.CommonDir }) {
			continue
		}
		w := WorktreeWatch{CommonDir: r.CommonDir}
		entries, _ := inputs.ReadDir(filepath.Join(r.CommonDir, "worktrees"))
		for _, e := range entries {
			w.Existing = append(w.Existing, e.Name())
		}
		modules, _ := inputs.ReadDir(filepath.Join(r.CommonDir, "modules"))
		for _, e := range modules {
			w.Modules = append(w.Modules, e.Name())
		}
		out = append(out, w)
	}
	return out
}

// NewWorktreeFiles returns, for a repository's common directory and the
// worktrees it had at start, the files of worktrees added since that git
// would follow out of the repository: a commondir that leads anywhere but
// the common directory, and any config.worktree.
func NewWorktreeFiles(w WorktreeWatch) []string {
	entries, _ := inputs.ReadDir(filepath.Join(w.CommonDir, "worktrees"))
	var out []string
	for _, e := range entries {
		if slices.Contains(w.Existing, e.Name()) {
			continue
		}
		dir := filepath.Join(w.CommonDir, "worktrees", e.Name())
		if fi, err := inputs.Lstat(dir); err != nil || !fi.IsDir() {
			out = append(out, dir) // a link or a file where git expects its directory
			continue
		}
		if cd := filepath.Join(dir, "commondir"); isFile(cd) && commonDir(dir) != w.CommonDir {
			out = append(out, cd)
		} else if fi, err := inputs.Lstat(cd); err == nil && !fi.Mode().IsRegular() {
			out = append(out, cd)
		}
		if _, err := inputs.Lstat(filepath.Join(dir, "config.worktree")); err == nil {
			out = append(out, filepath.Join(dir, "config.worktree"))
		}
	}
	return out
}

// NewModuleDirs returns the submodule git directories added to w's
// repository since the start.
func NewModuleDirs(w WorktreeWatch) []string {
	entries, _ := inputs.ReadDir(filepath.Join(w.CommonDir, "modules"))
	var out []string
	for _, e := range entries {
		if !slices.Contains(w.Modules, e.Name()) {
			out = append(out, filepath.Join(w.CommonDir, "modules", e.Name()))
		}
	}
	return out
}

// uninitialized are the .git paths of the submodules the work trees found
// name in .gitmodules but have not checked out: a repository the command
// creates there is entered by the host's next git status through the
// gitlink already in the index.
func (f *repoFinder) uninitialized() []string {
	var out []string
	for _, r := range f.repos {
		if r.WorkTree == "" {
			continue
		}
		var includes []string
		for _, e := range readGitConfig(filepath.Join(r.WorkTree, ".gitmodules"), "", maxGitIncludes, &includes) {
			if !strings.HasPrefix(e.key, "submodule.") || !strings.HasSuffix(e.key, ".path") {
				continue
			}
			dir := filepath.Join(r.WorkTree, filepath.FromSlash(e.value))
			g := filepath.Join(dir, ".git")
			if _, err := inputs.Lstat(g); err != nil && under(dir, r.WorkTree) && !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}
