package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// AuditKeepDays is how long rotated audit logs are kept.
const AuditKeepDays = 7

const auditDay = "2006-01-02"

// AuditLog appends denials, one JSON line each, to a file that rotates
// daily: a file last written on an earlier day becomes FILE.<that day>,
// and rotated files older than AuditKeepDays are removed. Several fence
// processes may share one log: each append holds a lock on the directory.
type AuditLog struct {
	Path string
	// Now is the clock; nil means time.Now. Days are local days.
	Now func() time.Time
}

// OpenAudit makes sure the log exists, so that the sandbox can be kept
// from writing it, and rotates it if it is from an earlier day.
func OpenAudit(path string) (*AuditLog, error) {
	a := &AuditLog{Path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return a, a.locked(a.prepare)
}

// Append writes d as one line.
func (a *AuditLog) Append(d Denial) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return err
	}
	line := buf.Bytes()
	return a.locked(func() error {
		if err := a.prepare(); err != nil {
			return err
		}
		f, err := os.OpenFile(a.Path, os.O_WRONLY|os.O_APPEND|noFollow, 0)
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		_, werr := f.Write(line)
		return errors.Join(werr, f.Close())
	})
}

func (a *AuditLog) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *AuditLog) locked(f func() error) error {
	unlock, err := LockDir(filepath.Dir(a.Path))
	if err != nil {
		return fmt.Errorf("audit log: lock %s: %w", filepath.Dir(a.Path), err)
	}
	defer unlock()
	return f()
}

// prepare creates the log when it is missing and rotates it when it was
// last written on an earlier day. The caller holds the lock.
func (a *AuditLog) prepare() error {
	fi, err := os.Lstat(a.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return a.create()
	case err != nil:
		return fmt.Errorf("audit log: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("audit log %s is not a regular file", a.Path)
	}
	today := a.now().Local()
	day := fi.ModTime().Local().Format(auditDay)
	if fi.Size() == 0 || day >= today.Format(auditDay) {
		return nil
	}
	if err := a.rotate(a.Path + "." + day); err != nil {
		return err
	}
	a.prune(today)
	return a.create()
}

func (a *AuditLog) create() error {
	f, err := os.OpenFile(a.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return f.Close()
}

// rotate moves the log to name, or appends it there when name exists
// already (a log rotated and then written again with an old clock).
func (a *AuditLog) rotate(name string) error {
	err := os.Link(a.Path, name)
	if errors.Is(err, fs.ErrExist) {
		err = appendFile(name, a.Path)
	}
	if err != nil {
		return fmt.Errorf("audit log: rotate: %w", err)
	}
	return os.Remove(a.Path)
}

func appendFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(out, in)
	return errors.Join(cerr, out.Close())
}

// prune removes rotated logs from more than AuditKeepDays days before
// today. A file it cannot remove stays; the next rotation tries again.
func (a *AuditLog) prune(today time.Time) {
	cutoff := today.AddDate(0, 0, -AuditKeepDays).Format(auditDay)
	ents, err := os.ReadDir(filepath.Dir(a.Path))
	if err != nil {
		return
	}
	prefix := filepath.Base(a.Path) + "."
	for _, e := range ents {
		day, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(auditDay, day); err == nil && day < cutoff {
			os.Remove(filepath.Join(filepath.Dir(a.Path), e.Name()))
		}
	}
}
