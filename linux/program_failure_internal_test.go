//go:build linux

package linux

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// TestFailureReports runs sandboxes whose program fails at one step, in
// a child this test process clones: the child reports the step and its
// errno, and the supervisor's error names what the step did (for a
// mount: the operation, source, target and rule).
func TestFailureReports(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make user namespaces here")
	}
	dir, err := os.MkdirTemp("/var/tmp", "fence-failure-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		plan    func(*sandbox.Plan)
		lowered func(*program) // corrupts a step, as no plan can
		errno   unix.Errno
		want    []string
		mount   *MountError
	}{
		{
			name: "a mask that cannot be moved onto its target",
			plan: func(p *sandbox.Plan) {
				p.Mounts.Masks = []sandbox.Mask{{Path: filepath.Join(dir, "adir"), Why: `filesystem.denyRead "adir" (test)`}}
			},
			errno: unix.EINVAL, // a file onto a directory
			want:  []string{"move_mount", `"/tmp/empty"`, filepath.Join(staging, "root", dir, "adir"), `(rule: filesystem.denyRead "adir" (test))`},
			mount: &MountError{Op: "move_mount", Source: "/tmp/empty", Target: filepath.Join(staging, "root", dir, "adir")},
		},
		{
			name: "a bind source that is gone",
			plan: func(p *sandbox.Plan) {
				p.Mounts.Binds = []sandbox.Bind{{Path: filepath.Join(dir, "gone"), Why: "allowWrite (test)"}}
			},
			errno: unix.ENOENT,
			want:  []string{"openat2 RESOLVE_NO_SYMLINKS", filepath.Join(dir, "gone")},
			mount: &MountError{Op: "openat2 RESOLVE_NO_SYMLINKS", Source: filepath.Join(dir, "gone")},
		},
		{
			name: "a Landlock rule whose path cannot be opened",
			plan: func(p *sandbox.Plan) {
				p.Landlock.Rules = append(p.Landlock.Rules, sandbox.LandlockRule{Path: loop, Access: "read"})
			},
			errno: unix.ELOOP,
			want:  []string{"landlock: the rule for " + `"` + loop + `" (read)`},
		},
		{
			name: "a seccomp filter the kernel refuses",
			lowered: func(p *program) {
				for i, s := range p.steps {
					if s.nr == unix.SYS_SECCOMP && s.a[1] == unix.SECCOMP_FILTER_FLAG_TSYNC {
						empty := &unix.SockFprog{}
						p.steps[i].a[2] = p.mem(empty, unsafe.Pointer(empty))
					}
				}
			},
			errno: unix.EINVAL,
			want:  []string{"seccomp(SECCOMP_SET_MODE_FILTER): invalid argument"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &sandbox.Plan{
				Argv: []string{"/bin/true"}, Dir: "/", UID: os.Getuid(), GID: os.Getgid(), Network: "none",
				Mounts:   sandbox.Mounts{PrivateTmp: true, Devices: "minimal"},
				Landlock: sandbox.Landlock{Rules: []sandbox.LandlockRule{{Path: "/", Access: "read"}}, MinABI: 1},
				Degraded: "warn",
			}
			if tt.plan != nil {
				tt.plan(plan)
			}
			testOnlyLowered = tt.lowered
			defer func() { testOnlyLowered = nil }()
			_, err := supervise(&wire{Plan: plan, Namespaces: true}, io.Discard)
			if !errors.Is(err, tt.errno) {
				t.Fatalf("err = %v, want %v", err, tt.errno)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to name %q", err, w)
				}
			}
			if tt.mount == nil {
				return
			}
			var me *MountError
			if !errors.As(err, &me) || me.Op != tt.mount.Op || me.Source != tt.mount.Source || me.Target != tt.mount.Target {
				t.Errorf("err = %#v, want a MountError with op %q, source %q, target %q", err, tt.mount.Op, tt.mount.Source, tt.mount.Target)
			}
		})
	}
}
