package cmd

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestLinksOnTheWay: every link met on the way to a path is found where
// it lies once the links before it are resolved, relative and absolute
// ones, links to links and ".." after a link included.
func TestLinksOnTheWay(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for _, d := range []string{"real/home", "other/dir"} {
		must(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	must(t, os.Symlink(filepath.Join(base, "other"), filepath.Join(base, "first")))
	must(t, os.Symlink("../real/home", filepath.Join(base, "other/second")))
	must(t, os.Symlink("second", filepath.Join(base, "other/third")))
	must(t, os.Symlink("dir/..", filepath.Join(base, "other/up")))
	home := filepath.Join(base, "real/home")
	tests := []struct {
		path string
		want []wayLink
	}{
		{home, []wayLink{}},
		{filepath.Join(base, "first/second"), []wayLink{{filepath.Join(base, "first"), home}, {filepath.Join(base, "other/second"), home}}},
		{filepath.Join(base, "first/third"), []wayLink{{filepath.Join(base, "first"), home}, {filepath.Join(base, "other/third"), home}, {filepath.Join(base, "other/second"), home}}},
		{filepath.Join(base, "first/up/second"), []wayLink{{filepath.Join(base, "first"), home}, {filepath.Join(base, "other/up"), home}, {filepath.Join(base, "other/second"), home}}},
		{filepath.Join(base, "missing"), nil},
		{"relative/path", nil},
	}
	for _, tt := range tests {
		if got := linksOnTheWay(tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("linksOnTheWay(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
