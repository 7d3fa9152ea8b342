package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// runReport is what --report writes when fence ends. Every key is
// written, empty or not, so that a reader can rely on each.
type runReport struct {
	Command  []string         `json:"command"` // argv as given after --
	Shell    string           `json:"shell"`   // the -c string
	Dir      string           `json:"dir"`
	Start    time.Time        `json:"start"`
	End      time.Time        `json:"end"`
	ExitCode int              `json:"exitCode"`
	Error    string           `json:"error"` // why fence itself failed, if it did
	Chain    policy.Chain     `json:"chain"`
	Denials  []sandbox.Denial `json:"denials"`

	rec *sandbox.Recorder
}

func newRunReport(argv []string, shell string) *runReport {
	dir, _ := os.Getwd()
	return &runReport{Command: append([]string{}, argv...), Shell: shell, Dir: dir, Start: time.Now().UTC(), Chain: policy.Chain{}}
}

// finish fills in how the run ended, from the error run returned.
func (r *runReport) finish(err error) {
	r.End = time.Now().UTC()
	r.Denials = append([]sandbox.Denial{}, r.rec.Denials()...)
	var ee *exitError
	switch {
	case err == nil:
		r.ExitCode = 0
	case errors.As(err, &ee):
		r.ExitCode = ee.code
		r.Error = ee.msg
	default:
		r.ExitCode = sandbox.ExitFenceError
		r.Error = err.Error()
	}
}

// write puts the report at path through a temporary file and a rename, so
// that whatever the command left at path (a link, say) is replaced, not
// written through.
func (r *runReport) write(path string) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(abs, data.Bytes(), 0o600)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
