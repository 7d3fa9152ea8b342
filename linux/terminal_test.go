//go:build linux

package linux_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestInteractiveShell runs `fence -- bash -i` on a pseudo-terminal, as a
// person would: the shell gets job control (Ctrl-Z stops a job, fg brings
// it back), sees terminal resizes, and fence gives the terminal back.
func TestInteractiveShell(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	w := newWorld(t, os.Getuid(), `{}`)
	cmd := exec.Command(filepath.Join(bin, "fence"), "-s", w.settings, "--", "bash", "--norc", "--noprofile", "-i")
	cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "TERM=dumb", "PS1=$ "}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	must(t, err)
	defer tty.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go io.Copy(lockedWriter{&mu, &out}, tty)
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second) // only a guard against a hung shell
		for {
			mu.Lock()
			ok := strings.Contains(out.String(), want)
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("terminal never showed %q; it shows:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	send := func(s string) { tty.WriteString(s) }

	send("echo ready-$FENCE_SANDBOX\n")
	expect("ready-1")
	send("stty size\n")
	expect("24 80")
	must(t, pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 100}))
	send("stty size\n")
	expect("40 100")
	send("sleep 1000\n")
	time.Sleep(200 * time.Millisecond)
	send("\x1a") // Ctrl-Z
	expect("Stopped")
	send("jobs\n")
	expect("sleep 1000")
	send("kill %1; fg\n")
	expect("Terminated")
	send("exit 3\n")
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("fence -- bash -i: %v, want exit 3", err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
