package cmd

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/fence-sandbox/fence/sandbox"
)

// auditSink appends each denial to the audit log, and counts the lines it
// could not write (a full disk, a file size limit), for the error the run
// then ends with: the policy asked for a record of every denial.
type auditSink struct {
	log    *sandbox.AuditLog
	stderr io.Writer

	mu     sync.Mutex
	failed int
	first  error
}

// append writes d, and says so the first time a line is lost.
func (s *auditSink) append(d sandbox.Denial) {
	err := s.log.Append(d)
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed++
	if s.first == nil {
		s.first = err
		fmt.Fprintf(s.stderr, "fence: warning: audit log %s: a denial could not be written: %v\n", s.log.Path, err)
	}
}

// lost is the error for the lines append could not write, or nil; s may
// be nil (no audit log).
func (s *auditSink) lost() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == 0 {
		return nil
	}
	return fmt.Errorf("audit log %s: %d denial line(s) could not be written (the first: %w)", s.log.Path, s.failed, s.first)
}

// endWithLost is the run's error err once a record the run was asked for
// (an audit line, the report) is lost: lost is said on stderr, and fence
// exits with ExitFenceError whatever the command's status, keeping a
// message err has yet to print.
func endWithLost(err, lost error, stderr io.Writer) error {
	if lost == nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: error: %v\n", lost)
	var ee *exitError
	switch {
	case err == nil:
		return &exitError{code: sandbox.ExitFenceError}
	case errors.As(err, &ee):
		return &exitError{code: sandbox.ExitFenceError, msg: ee.msg}
	}
	return err
}
