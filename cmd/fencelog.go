package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// KeyFenceLog is the rule kind that keeps --fence-log-file read-only
// inside the sandbox.
const KeyFenceLog = "mandatory.fenceLog"

// openFenceLog opens --fence-log-file for appending, before anything of
// the run starts: created 0600 if missing, never through a link at its
// last component (O_NOFOLLOW), and only a regular file. The descriptor
// is close-on-exec, so no process of the sandbox inherits it.
func openFenceLog(path string) (*os.File, string, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, "", fmt.Errorf("--fence-log-file %q: %w", path, err)
	}
	fd, err := unix.Open(abs, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, "", fmt.Errorf("--fence-log-file %q: refused: it is a symbolic link, which fence does not follow (the link could send fence's log onto any file the caller may write)", path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("--fence-log-file %q: open: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), abs)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("--fence-log-file %q: %w", path, err)
	}
	return f, abs, nil
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.HasPrefix(p, "/") {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return dir + "/" + p, nil
}

// protectFenceLog keeps the log read-only inside the sandbox, where a
// tree the policy makes writable may hold it.
func protectFenceLog(pol *policy.Policy, path string) {
	pol.DenyWrite = append(pol.DenyWrite, policy.Rule{Pattern: path, Origin: "always protected: the fence log (--fence-log-file)", Key: KeyFenceLog, Source: "fence (always protected)"})
}

// logSplitter sends fence's own debug lines (-d) and, under -m, its
// monitor summary lines to the log, and every other line (errors,
// warnings, hints, refusals) on to stderr, where the caller sees them.
// Only known diagnostic lines are diverted: a line of any other kind
// reaches stderr. A refusal ("fence: blocked …", a preflight verdict as
// well as a monitored one) goes to both under -m, so a blocked command
// never exits 125 without its reason on stderr. It writes whole lines;
// a last line without a newline goes out at Close.
type logSplitter struct {
	mu      sync.Mutex
	stderr  io.Writer
	log     io.WriteCloser
	monitor bool
	buf     []byte
}

func (s *logSplitter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.route(s.buf[:i+1])
		s.buf = s.buf[i+1:]
	}
}

// route writes line where it belongs; a lost line stops nothing, as on
// a closed stderr.
func (s *logSplitter) route(line []byte) {
	toLog, toStderr := s.destinations(line)
	if toLog {
		s.log.Write(line)
	}
	if toStderr {
		s.stderr.Write(line)
	}
}

// destinations says whether line goes to the log, to stderr, or both.
func (s *logSplitter) destinations(line []byte) (toLog, toStderr bool) {
	switch {
	case bytes.HasPrefix(line, []byte("fence: debug: ")):
		return true, false
	case !s.monitor:
		return false, true
	case bytes.HasPrefix(line, []byte("fence: monitor: ")):
		return true, false
	case bytes.HasPrefix(line, []byte("fence: blocked ")):
		return true, true
	}
	return false, true
}

// Close writes out a last partial line and closes the log.
func (s *logSplitter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.route(s.buf)
		s.buf = nil
	}
	return s.log.Close()
}
