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
	"github.com/fence-sandbox/fence/sandbox"
)

// historyName is the record, in the user config dir (which the sandbox
// always protects), of the trees earlier runs let their command write.
const historyName = "writable.json"

// maxHistory bounds the record; the oldest trees go first.
const maxHistory = 512

// writableHistory remembers which trees sandboxed runs of this user could
// write, so that a link one of them planted there is never trusted by a
// later run with a narrower policy: a run with the home writable could
// have replaced ~/.cache with a link to /etc.
type writableHistory struct{ dir string }

func (h writableHistory) path() string { return filepath.Join(h.dir, historyName) }

// trees are the recorded trees; a record fence cannot read is empty (it
// only ever adds suspicion, so losing it weakens no rule of the policy).
func (h writableHistory) trees() []string {
	b, err := policy.OSFS{}.ReadFile(h.path())
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
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return fmt.Errorf("create directory %q: %w", h.dir, err)
	}
	unlock, err := sandbox.LockDir(h.dir)
	if err != nil {
		return fmt.Errorf("lock %q: %w", h.dir, err)
	}
	defer unlock()
	trees = append(h.trees(), add...)
	if len(trees) > maxHistory {
		trees = trees[len(trees)-maxHistory:]
	}
	b, _ := json.MarshalIndent(struct{ Trees []string }{trees}, "", "  ")
	tmp, err := writeTemp(h.path(), append(b, '\n'), 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, h.path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %q: %w", h.path(), err)
	}
	return syncDir(h.path())
}
