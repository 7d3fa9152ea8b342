//go:build linux

package linux_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestForceNewSession runs fence from an interactive shell on a
// terminal. With forceNewSession the command leads a session of its own
// (as the host sees it, its session is not the shell's, which fence's
// is) and has no controlling terminal: /dev/tty does not open. Ctrl-C,
// which reaches fence's group, ends the run as fence passes it on;
// Ctrl-Z does not stop it (no job control), and -d says so. Without the
// key the command is in fence's session, with the terminal as its
// controlling terminal, as before. --force-new-session, upstream's flag,
// does for one run what the key does.
func TestForceNewSession(t *testing.T) {
	probe := `(exec 3</dev/tty) 2>/dev/null && echo tty-opens || echo no-tty; exec sleep %d`
	for _, engine := range engines {
		for _, u := range users(t) {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				for _, tt := range []struct {
					policy string
					own    bool
					flag   string
				}{{`{"forceNewSession": true}`, true, ""}, {`{}`, false, ""}, {`{}`, true, "--force-new-session "}} {
					w := newWorld(t, u.uid, tt.policy)
					sh := startShell(t, w, engine)
					marker := 1000031
					if !tt.own {
						marker = 1000032
					}
					sh.send(fmt.Sprintf("$F "+tt.flag+"-- sh -c '"+probe+"'\n", marker))
					if tt.own {
						sh.expect("no-tty\r\n")
					} else {
						sh.expect("tty-opens\r\n")
					}
					sid, tty := sessionOf(t, fmt.Sprint(marker))
					shellSid := sh.cmd.Process.Pid // the shell leads the terminal's session
					if own := sid != shellSid; own != tt.own {
						t.Errorf("%s: the command's session is %d, the shell's (and fence's) %d: want a session of its own %v", tt.policy, sid, shellSid, tt.own)
					}
					if hasTTY := tty != 0; hasTTY == tt.own {
						t.Errorf("%s: the command's controlling terminal is %#x: want one %v", tt.policy, tty, !tt.own)
					}
					sh.send("\x03")
					sh.expectResending("rc=130", "echo rc=$?\n")
					assertNoProcess(t, fmt.Sprint(marker))
					if !tt.own || tt.flag != "" {
						continue
					}
					// No job control: Ctrl-Z does not stop the run, which
					// goes on reading the terminal.
					sh.send("$F -- sh -c 'echo waiting; read l; echo got-$l; read l; echo got-$l'\n")
					sh.expect("waiting\r\n")
					sh.send("one\n")
					sh.expect("got-one\r\n")
					sh.send("\x1a")
					sh.send("two\n")
					sh.expect("got-two\r\n")
					sh.send("echo rc=$?\n")
					sh.expect("rc=0")
					if strings.Contains(shellOutput(sh), "Stopped") {
						t.Errorf("Ctrl-Z stopped a run in a session of its own:\n%s", shellOutput(sh))
					}
					sh.send("$F -d -- true\n")
					sh.expect("fence: debug: session: the command runs in a session of its own (forceNewSession)")
				}
			})
		}
	}
}

// sessionOf waits for the process whose command line is exactly
// "sleep MARKER" and returns its session and controlling terminal (0 for
// none) as the host's /proc shows them.
func sessionOf(t *testing.T, marker string) (sid, tty int) {
	t.Helper()
	want := []byte("sleep\x00" + marker + "\x00")
	deadline := time.Now().Add(30 * time.Second) // only a guard against a hung test
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want) {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
			i := bytes.LastIndexByte(stat, ')')
			if err != nil || i < 0 {
				continue
			}
			var state string
			var ppid, pgrp int
			if n, _ := fmt.Sscanf(string(stat[i+1:]), " %s %d %d %d %d", &state, &ppid, &pgrp, &sid, &tty); n == 5 {
				return sid, tty
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process runs sleep %s", marker)
	return 0, 0
}

// shellOutput is everything the terminal of sh showed so far.
func shellOutput(sh *shell) string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.out.String()
}
