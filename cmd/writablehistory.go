package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// historyName is the record, in the user config dir (which the sandbox
// always protects), of the trees earlier runs let their command write.
const historyName = "writable.json"

// writableHistory remembers which trees sandboxed runs of this user could
// write, so that a link one of them planted there is never trusted by a
// later run with a narrower policy: a run with the home writable could
// have replaced ~/.cache with a link to /etc.
//
// A record is kept in each user config dir a run may use
// ($XDG_CONFIG_HOME/fence and ~/.config/fence, both always protected), and
// read from both, so that a run with another XDG_CONFIG_HOME neither
// misses nor hides one. Trees that no longer exist are dropped.
type writableHistory struct{ dirs []string }

// historyOf is the record for the user config dir of opts and the one
// below the home.
func historyOf(opts policy.Options) writableHistory {
	h := writableHistory{dirs: []string{opts.UserConfigDir}}
	if home := filepath.Join(opts.Home, ".config", "fence"); home != opts.UserConfigDir {
		h.dirs = append(h.dirs, home)
	}
	return h
}

// trees are the recorded trees of every record; a record fence cannot
// read adds nothing (it only ever adds suspicion).
func (h writableHistory) trees() []string {
	var out []string
	for _, d := range h.dirs {
		for _, t := range readHistory(filepath.Join(d, historyName)) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func readHistory(path string) []string {
	b, err := policy.OSFS{}.ReadFile(path)
	if err != nil {
		return nil
	}
	var rec struct{ Trees []string }
	if json.Unmarshal(b, &rec) != nil {
		return nil
	}
	return rec.Trees
}

// record adds the trees pol lets the command write, under the same lock
// and with the same atomic replace as the trust record, when one is new.
func (h writableHistory) record(pol *policy.Policy) error {
	trees := h.trees()
	var add []string
	for _, r := range pol.Write {
		t := r.Pattern
		if i := strings.IndexAny(t, "*?[{\\"); r.Glob && i >= 0 {
			t = filepath.Dir(t[:i+1])
		}
		if !slices.ContainsFunc(trees, func(k string) bool { return t == k || strings.HasPrefix(t, k+"/") }) && !slices.Contains(add, t) {
			add = append(add, t)
		}
	}
	if len(add) == 0 {
		return nil
	}
	for _, d := range h.dirs {
		if err := addHistory(d, add); err != nil {
			return err
		}
	}
	return nil
}

// addHistory adds trees to the record in dir, under the same lock and
// with the same atomic replace as the trust record.
func addHistory(dir string, add []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory %q: %w", dir, err)
	}
	unlock, err := sandbox.LockDir(dir)
	if err != nil {
		return fmt.Errorf("lock %q: %w", dir, err)
	}
	defer unlock()
	path := filepath.Join(dir, historyName)
	trees := slices.DeleteFunc(readHistory(path), func(t string) bool {
		_, err := inputs.Lstat(t)
		return errors.Is(err, fs.ErrNotExist)
	})
	for _, t := range add {
		if !slices.Contains(trees, t) {
			trees = append(trees, t)
		}
	}
	b, _ := json.MarshalIndent(struct{ Trees []string }{trees}, "", "  ")
	tmp, err := writeTemp(path, append(b, '\n'), 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %q: %w", path, err)
	}
	return syncDir(path)
}
