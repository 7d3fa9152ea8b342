//go:build linux

package linux_test

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnusedInitEnds: whether fence runs a command or stops before (a
// blocked command line, a bad policy, a port in use), and whatever
// network the plan needs, no sandbox child (pid 1 of the sandbox) is left
// when fence exits. The test process becomes a subreaper, so a child that
// outlived fence would turn up as its child.
func TestUnusedInitEnds(t *testing.T) {
	must(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer busy.Close()
	hostNet, err := os.Readlink("/proc/self/ns/net")
	must(t, err)

	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			tests := []struct {
				name, policy string
				args         []string
				code         int
				stdout, err  string
			}{
				{"blocked command line", `{}`, []string{"-c", "reboot"}, 125, "", `^fence: blocked "reboot"`},
				{"bad policy", `{"filesystem": {"alowWrite": []}}`, []string{"--", "true"}, 125, "", `alowWrite`},
				{"port in use", `{}`, []string{"-p", busy.Addr().String(), "--", "true"}, 125, "", `address already in use`},
				{"private network", `{}`, []string{"--", "readlink", "/proc/self/ns/net"}, 0, "^net:", ""},
				{"host network", `{"network": {"allowedDomains": ["*"]}}`, []string{"--", "readlink", "/proc/self/ns/net"}, 0, "^" + regexp.QuoteMeta(hostNet) + "\n$", ""},
			}
			for _, tt := range tests {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, tt.args...)
				check(t, r, tt.code, tt.stdout, tt.err)
				if tt.name == "private network" && strings.TrimSpace(r.stdout) == hostNet {
					t.Errorf("%s: the command shares the host's network namespace", tt.name)
				}
				if left := orphanedInits(); len(left) > 0 {
					t.Errorf("%s: a sandbox init outlived fence: %v", tt.name, left)
				}
			}
		})
	}
}

// orphanedInits lists the sandbox children (whose command line is
// "fence-init", which the child writes over the one it inherited) that
// became children of this process, and reaps those that are already
// dead.
func orphanedInits() []string {
	var found []string
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if end < 0 || (string(cmdline) != "fence-init\x00" && !strings.Contains(s[:end], "(fence")) {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscanf(s[end+1:], " %s %d", &state, &ppid); err != nil || ppid != os.Getpid() {
			continue
		}
		found = append(found, e.Name()+" "+state)
		if state == "Z" {
			var pid int
			fmt.Sscanf(e.Name(), "%d", &pid)
			unix.Wait4(pid, nil, unix.WNOHANG, nil)
		}
	}
	return found
}
