package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// generatedTree makes a workspace of 100,000 files in 50 nested
// repositories (each with a .git of its own, like vendored clones or
// submodule checkouts).
func generatedTree(b *testing.B) string {
	dir := b.TempDir()
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs", ".git/info"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	for r := range 50 {
		repo := filepath.Join(dir, fmt.Sprintf("vendor/r%02d", r))
		for _, d := range []string{".git/hooks", ".git/objects", ".git/refs"} {
			os.MkdirAll(filepath.Join(repo, d), 0o755)
		}
		os.WriteFile(filepath.Join(repo, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(repo, ".git/config"), nil, 0o644)
		for d := range 40 {
			sub := filepath.Join(repo, fmt.Sprintf("pkg%02d", d))
			os.MkdirAll(sub, 0o755)
			for f := range 50 {
				os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), nil, 0o644)
			}
		}
	}
	return dir
}

// BenchmarkPlanProtections measures, for the code template, the on-disk
// protections of a run (links resolved, repositories found and their
// control files protected) and the whole planning they are part of
// (compile, protections, plan with its glob walks and pins), on this
// repository and on the generated tree.
func BenchmarkPlanProtections(b *testing.B) {
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dirs := []struct {
		name string
		dir  func(*testing.B) string
	}{
		{"this-repo", func(*testing.B) string { return repo }},
		{"50-repos-100k-files", generatedTree},
	}
	for _, d := range dirs {
		dir := d.dir(b)
		opts := policy.Options{Template: "code", Dir: dir, Home: "/root", UserConfigDir: "/root/.config/fence"}
		res, err := policy.Load(opts)
		if err != nil {
			b.Fatal(err)
		}
		res.Config.Filesystem.GlobBudgetMs = policy.MaxGlobBudgetMs // measure, never cut
		b.Run(d.name+"/protections", func(b *testing.B) {
			for b.Loop() {
				if _, err := prepareOnDisk(compileResolved(res, opts), res, opts, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/plan", func(b *testing.B) {
			for b.Loop() {
				pol := compileResolved(res, opts)
				disk, err := prepareOnDisk(pol, res, opts, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}, Disk: disk}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
