package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestExposePaths checks the flags' paths: below /tmp, there, no link on
// the way; relative paths are the working directory's.
func TestExposePaths(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "fence-expose-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want, err string }{
		{path: dir + "/d", want: dir + "/d"},
		{path: "d", want: dir + "/d"},
		{path: dir + "/d/../d/", want: dir + "/d"},
		{path: "/etc", err: "only a path below /tmp can be exposed"},
		{path: "/tmpfoo", err: "only a path below /tmp can be exposed"},
		{path: dir + "/missing", err: "no such file or directory"},
		{path: dir + "/link", err: "is a symbolic link or lies below one (it leads to \"" + dir + "/d\")"},
		{path: dir + "/link/.", err: "symbolic link"},
		{path: "", err: "empty path"},
	}
	for _, tt := range tests {
		got, err := (&exposeFlags{rw: []string{tt.path}}).paths(dir)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("paths(%q) = %v, %v; want an error with %q", tt.path, got, err, tt.err)
		case tt.err == "" && (err != nil || len(got) != 1 || got[0].path != tt.want || !got[0].write):
			t.Errorf("paths(%q) = %v, %v; want %q, writable", tt.path, got, err, tt.want)
		}
	}
}

// TestExposeRefusesDenied refuses an exposed path a deny rule or a
// protection covers, naming the rule, and adds the rest to the policy.
func TestExposeRefusesDenied(t *testing.T) {
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{
		DenyRead:  []string{"/tmp/secret"},
		DenyWrite: []string{"/tmp/kept"},
	}}, policy.Env{Dir: "/w", Home: "/tmp/h"})
	protectFenceLog(pol, "/tmp/fence.log")
	tests := []struct {
		e    exposed
		want string
	}{
		{exposed{"--expose-host-path", "/tmp/secret/x", false}, `refused: filesystem.denyRead "/tmp/secret"`},
		{exposed{"--expose-host-path-rw", "/tmp/secret", true}, `refused: filesystem.denyRead "/tmp/secret"`},
		{exposed{"--expose-host-path-rw", "/tmp/kept/x", true}, `refused: filesystem.denyWrite "/tmp/kept"`},
		{exposed{"--expose-host-path-rw", "/tmp/h/.bashrc", true}, `refused: mandatory.shellStartup "/tmp/h/.bashrc"`},
		{exposed{"--expose-host-path", "/tmp/h/.bashrc", false}, ""},
		{exposed{"--expose-host-path-rw", "/tmp/fence.log", true}, `refused: mandatory.fenceLog "/tmp/fence.log" (always protected: the fence log (--fence-log-file))`},
		{exposed{"--expose-host-path", "/tmp/kept", false}, ""},
		{exposed{"--expose-host-path-rw", "/tmp/ok", true}, ""},
	}
	for _, tt := range tests {
		p := *pol
		err := expose(&p, []exposed{tt.e})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("expose(%v): %v", tt.e, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("expose(%v) = %v, want an error with %q", tt.e, err, tt.want)
		case tt.want == "":
			access := map[bool]string{false: "read", true: "write"}[tt.e.write]
			if d := p.CheckPath(access, tt.e.path, tt.e.path); !d.Allowed || d.Rule == "" {
				t.Errorf("after expose(%v): CheckPath(%s) = %+v", tt.e, access, d)
			}
		}
	}
}

// TestMountAt: an exposed path that is a mount point, holds one or lies
// inside one below /tmp is refused; /tmp's own mount and mounts
// elsewhere are not in the way.
func TestMountAt(t *testing.T) {
	mounts := []string{"/", "/tmp", "/tmp/bound", "/home", "/tmp/a/b c"}
	for abs, want := range map[string]string{
		"/tmp/bound":     "/tmp/bound",
		"/tmp/bound/sub": "/tmp/bound",
		"/tmp":           "/tmp/bound",
		"/tmp/a":         "/tmp/a/b c",
		"/tmp/other":     "",
		"/tmp/boundless": "",
	} {
		if got := mountAt(abs, mounts); got != want {
			t.Errorf("mountAt(%q) = %q, want %q", abs, got, want)
		}
	}
	if got := unescapeMount(`/tmp/a/b\040c`); got != "/tmp/a/b c" {
		t.Errorf("unescapeMount = %q", got)
	}
}
