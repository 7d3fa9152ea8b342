package darwin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// logReady bounds the wait for the log stream to start following.
const logReady = 3 * time.Second

// streamDenials follows the unified log for this run's denials (see
// denials.go), and prints each as it happens, until stop is called. It
// returns once the stream follows (its first line is out), so that the
// command's first denials are not missed, and says so when the stream
// ends before stop (log refused, or failed). The
// stream runs in a process group of its own, which the terminal's Ctrl-C
// does not end.
func streamDenials(tag string, stderr io.Writer) (stop func()) {
	argv := logStreamArgs(tag)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var complaint bytes.Buffer
	cmd.Stderr = &complaint
	out, err := cmd.StdoutPipe()
	if err != nil || cmd.Start() != nil {
		fmt.Fprintf(stderr, "fence: warning: -m: cannot start %s, so denials will not be shown\n", argv[0])
		return func() {}
	}
	var stopping atomic.Bool
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		printDenials(out, tag, stderr, ready)
		err := cmd.Wait()
		if !stopping.Load() {
			fmt.Fprintf(stderr, "fence: warning: -m: %s stream ended (%s), so denials will not be shown\n", argv[0], logEnd(complaint.String(), err))
		}
	}()
	select {
	case <-ready:
	case <-time.After(logReady):
		fmt.Fprintf(stderr, "fence: warning: -m: the unified log stream did not start within %s: the command's first denials may not be shown\n", logReady)
	}
	return func() {
		stopping.Store(true)
		cmd.Process.Kill()
		<-done
	}
}

// printDenials prints the denials among the stream's lines until it
// ends, and closes ready at its first line or end.
func printDenials(out io.Reader, tag string, stderr io.Writer, ready chan<- struct{}) {
	sc := bufio.NewScanner(out)
	first := true
	for sc.Scan() {
		if first {
			close(ready)
			first = false
		}
		if text, ok := denial(sc.Text(), tag); ok {
			fmt.Fprintf(stderr, "fence: denied: %s\n", text)
		}
	}
	if first {
		close(ready)
	}
}
