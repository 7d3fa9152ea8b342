package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/fence-sandbox/fence/policy"
)

// hookPolicyFiles refuses the policy a hook was told to judge by
// (`fence hook AGENT -s FILE`, as an agent's settings name it) when that
// file, or one it extends, lies in a tree a sandboxed run could write:
// a tree an earlier run of this user could write (writableHistory), or
// one a builtin template makes writable (~/.cache, ~/.npm, /tmp, ...). A run protects its own -s file, but the hook reads
// its file on every call of every session, and any other sandboxed run
// (one that names another file, or none) could have rewritten it between
// two calls: every later call would be judged by the command's policy.
// Discovered configs are checked by their trust record instead, and the
// user config directories are read-only in every run, so a file there is
// fine wherever the record says runs wrote. The error says which file,
// which tree and where to put it; the hook denies every call it judges
// with it.
func hookPolicyFiles(opts policy.Options, res *policy.Resolved) error {
	if opts.Settings == "" || res == nil {
		return nil
	}
	safe := []string{opts.UserConfigDir, filepath.Join(opts.Home, ".config", "fence")}
	trees := writableTreesEver(opts)
	for _, f := range res.Files {
		for _, p := range policyFileSpellings(f) {
			if inAnyDir(p, safe) {
				continue
			}
			if t, why, ok := firstSuspectTree(p, trees); ok {
				return fmt.Errorf("the hook's policy file %s lies in %s, %s: a sandboxed command could have rewritten the policy every later call is judged by, so the hook judges by none of it; move the file into %s, which every sandbox keeps read-only, and name that in the agent's settings (fence hooks install --settings FILE)",
					p, t, why, filepath.Join(opts.Home, ".config", "fence"))
			}
		}
	}
	return nil
}

// suspectTree is a tree a sandbox could write, with why.
type suspectTree struct{ path, why string }

// writableTreesEver are the trees any sandboxed run of this user could
// have written, as far as fence can know.
func writableTreesEver(opts policy.Options) []suspectTree {
	var out []suspectTree
	for _, t := range historyOf(opts).trees() {
		out = append(out, suspectTree{t, "a tree an earlier sandboxed run could write"})
	}
	for _, t := range policy.TemplateWriteTrees(opts.Home) {
		out = append(out, suspectTree{t, "a tree a builtin template makes writable"})
	}
	return out
}

// policyFileSpellings are f made absolute as written and with its links resolved,
// once each: a link or a target in a writable tree is as bad.
func policyFileSpellings(f string) []string {
	abs, err := filepath.Abs(f)
	if err != nil {
		abs = f
	}
	out := []string{filepath.Clean(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != out[0] {
		out = append(out, real)
	}
	return out
}

// firstSuspectTree is the first of trees that holds p.
func firstSuspectTree(p string, trees []suspectTree) (string, string, bool) {
	for _, t := range trees {
		if t.path != "" && pathWithin(p, filepath.Clean(t.path)) {
			return t.path, t.why, true
		}
	}
	return "", "", false
}

// inAnyDir reports whether p lies in one of dirs.
func inAnyDir(p string, dirs []string) bool {
	for _, d := range dirs {
		if d != "" && pathWithin(p, filepath.Clean(d)) {
			return true
		}
	}
	return false
}

// pathWithin reports whether p is dir or below it.
func pathWithin(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (rel == "." || len(rel) < 3 || rel[:3] != "../")
}
