//go:build linux

package linux

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestQuarantine: what is moved aside is what the command made at the
// path, walked without following links: a link on the way is moved, and
// what it leads to (a file of the host's) is left alone.
func TestQuarantine(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(root string) error
		path    string // below root
		moved   string // below root; "" for nothing
		err     error
		untouch string // a host file that must stay
	}{
		{"a planted file", func(r string) error { return os.WriteFile(r+"/ws/.envrc", nil, 0o644) }, "ws/.envrc", "ws/.envrc.fence-quarantine-7", nil, ""},
		{"a planted directory", func(r string) error { return os.MkdirAll(r+"/ws/.claude/hooks", 0o755) }, "ws/.claude", "ws/.claude.fence-quarantine-7", nil, ""},
		{"a planted link at the path", func(r string) error { return os.Symlink(r+"/host/file", r+"/ws/.envrc") }, "ws/.envrc", "ws/.envrc.fence-quarantine-7", nil, "host/file"},
		{"a link on the way", func(r string) error { return os.Symlink(r+"/host", r+"/ws/.config") }, "ws/.config/mise/config.toml", "ws/.config.fence-quarantine-7", nil, "host/mise/config.toml"},
		{"nothing there", func(string) error { return nil }, "ws/.envrc", "", unix.ENOENT, ""},
		{"a file on the way", func(r string) error { return os.WriteFile(r+"/ws/.config", nil, 0o644) }, "ws/.config/mise/config.toml", "", unix.ENOENT, "ws/.config"},
		{"the aside name is taken", func(r string) error {
			return errors.Join(os.WriteFile(r+"/ws/.envrc", nil, 0o644), os.WriteFile(r+"/ws/.envrc.fence-quarantine-7", nil, 0o644))
		}, "ws/.envrc", "", unix.EEXIST, "ws/.envrc"},
		{"the parent made read-only", func(r string) error {
			return errors.Join(os.MkdirAll(r+"/ws/.git", 0o755), os.WriteFile(r+"/ws/.git/commondir", nil, 0o644), os.Chmod(r+"/ws/.git", 0o555))
		}, "ws/.git/commondir", "ws/.git/commondir.fence-quarantine-7", nil, ""},
		{"the parent made unsearchable", func(r string) error {
			return errors.Join(os.MkdirAll(r+"/ws/.git/x", 0o755), os.WriteFile(r+"/ws/.git/x/y", nil, 0o644), os.Chmod(r+"/ws/.git", 0o000))
		}, "ws/.git/x/y", "ws/.git/x/y.fence-quarantine-7", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"ws", "host/mise"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"host/file", "host/mise/config.toml"} {
				if err := os.WriteFile(filepath.Join(root, f), []byte("host"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.setup(root); err != nil {
				t.Fatal(err)
			}
			aside, err := quarantine(filepath.Join(root, tt.path), "7")
			if !errors.Is(err, tt.err) || tt.err == nil && err != nil {
				t.Fatalf("quarantine(%s) = %q, %v; want error %v", tt.path, aside, err, tt.err)
			}
			if want := filepath.Join(root, tt.moved); tt.moved != "" && aside != want {
				t.Errorf("moved %q, want %q", aside, want)
			}
			if tt.untouch != "" {
				if _, err := os.Lstat(filepath.Join(root, tt.untouch)); err != nil {
					t.Errorf("%s was touched: %v", tt.untouch, err)
				}
			}
		})
	}
}
