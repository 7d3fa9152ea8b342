package cmd

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// keepBackups is how many fence.jsonc.bak.<unix-seconds> files an edit
// leaves next to the file.
const keepBackups = 3

// errChanged says the file changed between reading and replacing it.
var errChanged = errors.New("changed on disk while fence was editing it; nothing was written: run the command again")

// grantHook, when set by a test, runs after the edit is worked out and
// before the file is checked again and replaced.
var grantHook func(path string)

// configEdit is one change to a config file: the bytes read, with the mode
// they had, and the bytes to write.
type configEdit struct {
	path   string
	old    []byte // nil for a file that does not exist yet
	mode   fs.FileMode
	new    []byte
	backup string // set by commit when a previous version was kept
}

// readForEdit reads path, which may not exist yet.
func readForEdit(path string) (*configEdit, error) {
	e := &configEdit{path: path, mode: 0o644}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", path)
	}
	e.mode = fi.Mode().Perm()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("read %q: %w", path, err)
	}
	e.old = buf.Bytes()
	return e, nil
}

// commit writes the new bytes: it keeps the previous version as a backup,
// checks that the file still holds what was read, and replaces it through
// a synced temporary file, so a reader sees the old file or the new one,
// never a mix.
func (e *configEdit) commit() error {
	if grantHook != nil {
		grantHook(e.path)
	}
	tmp, err := writeTemp(e.path, e.new, e.mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if e.old == nil {
		if err := os.Link(tmp, e.path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", e.path, errChanged)
			}
			return fmt.Errorf("create %q: %w", e.path, err)
		}
		return syncDir(e.path)
	}
	if err := e.keepBackup(); err != nil {
		return err
	}
	now, err := os.ReadFile(e.path)
	if err != nil || !bytes.Equal(now, e.old) {
		os.Remove(e.backup)
		e.backup = ""
		return fmt.Errorf("%s: %w", e.path, errChanged)
	}
	if err := os.Rename(tmp, e.path); err != nil {
		return fmt.Errorf("replace %q: %w", e.path, err)
	}
	if err := syncDir(e.path); err != nil {
		return err
	}
	return pruneBackups(e.path, keepBackups)
}

// keepBackup writes the old bytes to path.bak.<unix-seconds>. Names must
// sort by age, so with a newer backup already there (several edits in one
// second) it takes the second after that one.
func (e *configEdit) keepBackup() error {
	tmp, err := writeTemp(e.path, e.old, e.mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	start := time.Now().Unix()
	if olds, err := backups(e.path); err == nil && len(olds) > 0 {
		start = max(start, backupTime(e.path, olds[len(olds)-1])+1)
	}
	for sec := start; ; sec++ {
		name := e.path + ".bak." + strconv.FormatInt(sec, 10)
		err := os.Link(tmp, name)
		if err == nil {
			e.backup = name
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("keep a backup of %q: %w", e.path, err)
		}
	}
}

// pruneBackups removes all but the newest keep backups of path.
func pruneBackups(path string, keep int) error {
	olds, err := backups(path)
	if err != nil || len(olds) <= keep {
		return err
	}
	for _, b := range olds[:len(olds)-keep] {
		if err := os.Remove(b); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old backup: %w", err)
		}
	}
	return nil
}

// backups lists path's backups, oldest first.
func backups(path string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		b := filepath.Join(filepath.Dir(path), e.Name())
		if e.Type().IsRegular() && backupTime(path, b) >= 0 {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(backupTime(path, a), backupTime(path, b)) })
	return out, nil
}

// backupTime is the time in the name of a backup of path, or -1 when
// name is not one.
func backupTime(path, name string) int64 {
	rest, ok := strings.CutPrefix(name, path+".bak.")
	if !ok {
		return -1
	}
	sec, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || sec < 0 {
		return -1
	}
	return sec
}

// writeTemp writes data to a synced temporary file next to path.
func writeTemp(path string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create temporary file: %w", err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Chmod(mode), f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %q: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// syncDir makes a rename or link in path's directory durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %q: %w", filepath.Dir(path), err)
	}
	return nil
}
