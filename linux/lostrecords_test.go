//go:build linux

package linux_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fullDir is a directory on a file system of its own with no space left
// (a small tmpfs, filled), which every user may write.
func fullDir(t *testing.T, w *world) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := w.base + "/full"
	must(t, os.Mkdir(dir, 0o777))
	must(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0777"))
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	f, err := os.Create(dir + "/filler")
	must(t, err)
	defer f.Close()
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	return dir
}

// TestLostRecords: an audit line or a report fence cannot write (the
// file system is full) is an error fence names at exit, with the file and
// why, and exits 125 for, though the command succeeded; in both engines,
// as root and as uid 65534.
func TestLostRecords(t *testing.T) {
	const policy = `{"filesystem": {"allowWrite": ["."]}}`
	const script = `./netprobe connect 127.0.0.1:9 >/dev/null; exit 0`
	type run func(w *world, args ...string) result
	engines := []struct {
		name  string
		users []user
		run   func(t *testing.T, u user) (*world, run)
	}{
		{"namespaces", users(t), func(t *testing.T, u user) (*world, run) {
			w := newWorld(t, u.uid, policy)
			return w, func(w *world, args ...string) result { return w.fence(t, "", nil, args...) }
		}},
		{"Landlock-only", landlockOnlyUsers(t), func(t *testing.T, u user) (*world, run) {
			w := landlockWorld(t, u, policy)
			return w, func(w *world, args ...string) result { return w.landlockOnly(t, u, args...) }
		}},
	}
	for _, e := range engines {
		for _, u := range e.users {
			t.Run(e.name+"/"+u.name, func(t *testing.T) {
				w, fence := e.run(t, u)
				dir := fullDir(t, w)
				cases := []struct{ name, flag, file, want string }{
					{"audit", "--audit", "audit.jsonl", "fence: error: audit log " + dir + "/audit.jsonl: 1 denial line(s) could not be written (the first: "},
					{"report", "--report", "report.json", "fence: error: report " + dir + "/report.json: "},
				}
				for _, c := range cases {
					r := fence(w, c.flag, dir+"/"+c.file, "-c", script)
					line := ""
					for _, l := range strings.Split(r.stderr, "\n") {
						if strings.HasPrefix(l, "fence: error: ") {
							line = l
						}
					}
					if r.code != 125 || !strings.HasPrefix(line, c.want) || !strings.HasSuffix(line, "no space left on device") && !strings.HasSuffix(line, "no space left on device)") {
						t.Errorf("%s on a full file system: fence = %d, error line %q; want 125 and %q...no space left on device\n%s", c.name, r.code, line, c.want, r.stderr)
					}
				}
				// A report that can be written says the audit log lost a line.
				fence(w, "--audit", dir+"/audit2.jsonl", "--report", w.base+"/run.json", "-c", script)
				b, err := os.ReadFile(w.base + "/run.json")
				must(t, err)
				var rep struct {
					ExitCode int    `json:"exitCode"`
					Error    string `json:"error"`
				}
				must(t, json.Unmarshal(b, &rep))
				if rep.ExitCode != 125 || !strings.HasPrefix(rep.Error, "audit log "+dir+"/audit2.jsonl: 1 denial line(s) could not be written") {
					t.Errorf("the report does not say the audit log lost a line: %+v", rep)
				}
			})
		}
	}
}
