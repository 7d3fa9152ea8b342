package sandbox

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDiskWalk: the cached walk visits what filepath.WalkDir visits, in
// the same order, with SkipDir on a directory and on a file, SkipAll,
// and a missing root, once from the disk and once from the cache.
func TestDiskWalk(t *testing.T) {
	root := mktree(t, "a/x", "a/y", "b/skip/deep", "b/z", "c/1", "c/2", "c/3", "d/stop", "e/never")
	fns := map[string]func(visit *[]string) fs.WalkDirFunc{
		"all": func(v *[]string) fs.WalkDirFunc {
			return func(p string, d fs.DirEntry, err error) error { *v = append(*v, p); return nil }
		},
		"skip": func(v *[]string) fs.WalkDirFunc {
			return func(p string, d fs.DirEntry, err error) error {
				*v = append(*v, p)
				switch filepath.Base(p) {
				case "skip":
					return filepath.SkipDir
				case "2":
					return filepath.SkipDir // a file: the rest of c is skipped
				case "stop":
					return filepath.SkipAll
				}
				return nil
			}
		},
	}
	disk := NewDisk()
	for name, fn := range fns {
		for _, r := range []string{root, root + "/missing"} {
			var want, got, again []string
			filepath.WalkDir(r, fn(&want))
			disk.Walk(r, fn(&got))
			disk.Walk(r, fn(&again))
			if !slices.Equal(got, want) || !slices.Equal(again, want) {
				t.Errorf("%s %s: walked\n  %s\nthen\n  %s\nwant\n  %s", name, r, strings.Join(got, "\n  "), strings.Join(again, "\n  "), strings.Join(want, "\n  "))
			}
		}
	}
}
