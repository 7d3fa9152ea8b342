package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// trustName is the trust record's name in the user config dir, which the
// sandbox always protects.
const trustName = "trust.json"

// trustStore is the trust record of one user config dir.
type trustStore struct{ dir string }

func (s trustStore) path() string { return filepath.Join(s.dir, trustName) }

// read returns the record, empty when there is none. A record fence
// cannot read or parse is an error: it vouches for nothing.
func (s trustStore) read() (policy.Trust, error) {
	b, err := policy.OSFS{}.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return policy.Trust{Files: map[string]policy.TrustEntry{}}, nil
	}
	if err != nil {
		return policy.Trust{}, fmt.Errorf("read trust record: %w", err)
	}
	rec, err := policy.ParseTrust(b)
	if err != nil {
		return policy.Trust{}, fmt.Errorf("read %s: %w", s.path(), err)
	}
	return rec, nil
}

// update changes the record under a lock on the user config dir, so that
// fences trusting at the same time keep each other's entries, and
// replaces it through a synced temporary file (mode 0600).
func (s trustStore) update(change func(*policy.Trust)) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create directory %q: %w", s.dir, err)
	}
	unlock, err := sandbox.LockDir(s.dir)
	if err != nil {
		return fmt.Errorf("lock %q: %w", s.dir, err)
	}
	defer unlock()
	rec, err := s.read()
	if err != nil {
		return err
	}
	change(&rec)
	tmp, err := writeTemp(s.path(), rec.JSON(), 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, s.path()); err != nil {
		return fmt.Errorf("replace %q: %w", s.path(), err)
	}
	return syncDir(s.path())
}

// now is when a file is trusted, as the record writes it.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// protectedConfig says which config files need no trust: those whose
// real path lies in the real user config dir, which no sandbox can write.
// A link there that leads elsewhere leads to a file a sandbox may write.
func protectedConfig(userDir string) func(string) bool {
	realDir, err := inputs.EvalSymlinks(userDir)
	return func(p string) bool {
		if err != nil || !under(p, filepath.Clean(userDir)) {
			return false
		}
		real, rerr := inputs.EvalSymlinks(p)
		return rerr == nil && under(real, realDir)
	}
}

// trustExempt says which config files of opts need no trust: the user
// config dir's (see protectedConfig), and a legacy user config file
// (~/.fence.jsonc, ~/.fence.json) that is a link into it. A legacy file
// itself needs trust like a project's: a sandbox protects the path only
// if it exists when the run starts, so a command with a writable home can
// create it, and a run started before the first one ends (or after fence
// was killed before moving it aside) would read it.
func trustExempt(opts policy.Options) func(string) bool {
	inDir := protectedConfig(opts.UserConfigDir)
	legacy := opts.LegacyUserConfigPaths()
	return func(p string) bool {
		if inDir(p) {
			return true
		}
		if !slices.Contains(legacy, p) {
			return false
		}
		fi, err := inputs.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return false
		}
		real, err := inputs.EvalSymlinks(p)
		return err == nil && inDir(real)
	}
}

// checkTrust returns the files of a discovered chain that the record does
// not vouch for. It first makes sure the user config dir exists: a sandbox
// can protect only a directory that is there when it starts, and this is
// where the record lives.
func checkTrust(opts policy.Options, res *policy.Resolved) ([]policy.TrustProblem, error) {
	if opts.UserConfigDir != "" {
		os.MkdirAll(opts.UserConfigDir, 0o700) // best effort: a home fence cannot write, no sandbox can either
	}
	if !opts.Discovered() {
		return nil, nil
	}
	rec, err := trustStore{opts.UserConfigDir}.read()
	if err != nil {
		return nil, err
	}
	return rec.Check(opts, res, trustExempt(opts)), nil
}

// untrustedError refuses a run whose discovered chain holds files the
// record does not vouch for. report prints it with hints.
type untrustedError struct{ problems []policy.TrustProblem }

func (e *untrustedError) Error() string {
	parts := make([]string, len(e.problems))
	for i, p := range e.problems {
		parts[i] = describeProblem(p)
	}
	return strings.Join(parts, "; ")
}

// print writes one error line for each file, and how to review and trust
// them.
func (e *untrustedError) print(w io.Writer) {
	for _, p := range e.problems {
		fmt.Fprintf(w, "fence: error: %s\n", describeProblem(p))
	}
	fmt.Fprintf(w, "fence: hint: review the policy that applies here with: fence config show\n")
	fmt.Fprintf(w, "fence: hint: trust it with: %s\n", trustCommand(e.problems))
}

// describeProblem says what is wrong with one file and why it matters.
func describeProblem(p policy.TrustProblem) string {
	switch {
	case p.Gone():
		return fmt.Sprintf("%q, which you trusted, is gone, so another config applies here: a sandboxed command may have removed it", p.Path)
	case p.Changed():
		return fmt.Sprintf("%q changed since you trusted it (sha256 %s then, %s now): a sandboxed command may have written it", p.Path, p.Was, p.Now)
	}
	return fmt.Sprintf("%q is not trusted: a sandboxed command may have written it", p.Path)
}

// trustCommand is the command that trusts what problems name: the file
// when it is the only one, else the whole chain of the working directory.
func trustCommand(problems []policy.TrustProblem) string {
	if len(problems) == 1 && !problems[0].Gone() {
		return "fence config trust " + shellQuote(problems[0].Path)
	}
	return "fence config trust"
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
