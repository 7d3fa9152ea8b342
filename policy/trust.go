package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
)

// TrustVersion is the version of the trust record's format.
const TrustVersion = 1

// Trust is the record of config files the user has reviewed: a file found
// by discovery sets a run's policy only while its bytes are the ones the
// user trusted. A sandboxed command may write a config file wherever it
// can write (sub/fence.jsonc, for a run started in sub/ later); the record
// lives in the user config dir, which no sandbox can write.
type Trust struct {
	Version int                   `json:"version"`
	Files   map[string]TrustEntry `json:"files"`
}

// TrustEntry is one trusted file: the SHA-256 of its bytes and when it was
// trusted (RFC 3339, set by whoever records it).
type TrustEntry struct {
	SHA256  string `json:"sha256"`
	Trusted string `json:"trusted,omitempty"`
}

// HashConfig is the hex SHA-256 of a config file's bytes.
func HashConfig(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ParseTrust decodes a trust record. Anything it does not understand is an
// error: a record fence cannot read vouches for nothing.
func ParseTrust(b []byte) (Trust, error) {
	var t Trust
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Trust{}, fmt.Errorf("decode trust record: %w", err)
	}
	if t.Version != TrustVersion {
		return Trust{}, fmt.Errorf("trust record has version %d, want %d", t.Version, TrustVersion)
	}
	for path, e := range t.Files {
		if !filepath.IsAbs(path) {
			return Trust{}, fmt.Errorf("trust record holds %q, which is not an absolute path", path)
		}
		if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != sha256.Size {
			return Trust{}, fmt.Errorf("trust record holds %q for %q, which is not a SHA-256", e.SHA256, path)
		}
	}
	if t.Files == nil {
		t.Files = map[string]TrustEntry{}
	}
	return t, nil
}

// JSON encodes the record, paths sorted, ending with a newline.
func (t Trust) JSON() []byte {
	if t.Files == nil {
		t.Files = map[string]TrustEntry{}
	}
	t.Version = TrustVersion
	b, _ := json.MarshalIndent(t, "", "  ")
	return append(b, '\n')
}

// Add trusts path with hash and returns the hash it trusted before, if
// any.
func (t *Trust) Add(path, hash, when string) (was string) {
	if t.Files == nil {
		t.Files = map[string]TrustEntry{}
	}
	was = t.Files[path].SHA256
	t.Files[path] = TrustEntry{SHA256: hash, Trusted: when}
	return was
}

// Remove forgets path and reports whether it was trusted.
func (t *Trust) Remove(path string) bool {
	_, ok := t.Files[path]
	delete(t.Files, path)
	return ok
}

// Trusts reports whether path is trusted with exactly hash.
func (t Trust) Trusts(path, hash string) bool {
	e, ok := t.Files[path]
	return ok && e.SHA256 == hash
}

// TrustProblem is a file that a discovered chain depends on and the
// record does not vouch for. Now is the hash of the bytes fence read, ""
// when the file is gone; Was is the hash trusted before, "" when the file
// was never trusted.
type TrustProblem struct {
	Path string
	Now  string
	Was  string
}

// Gone says a trusted file that discovery would have found first is no
// longer there, so another config applies.
func (p TrustProblem) Gone() bool { return p.Now == "" }

// Changed says the file was trusted with other bytes.
func (p TrustProblem) Changed() bool { return p.Now != "" && p.Was != "" }

// Discovered reports whether opts leave the config to discovery: without
// --settings and --template the caller did not name the config, so it may
// be one a sandboxed command wrote.
func (o Options) Discovered() bool { return o.Settings == "" && o.Template == "" }

// TrustFiles lists the files of r that trust must vouch for, root first:
// every file that was read, except those protected says need none (the
// user config dir's own files, which no sandbox can write; nil means those
// lexically below opts.UserConfigDir). Builtin templates are part of fence
// and need no trust.
func (r *Resolved) TrustFiles(opts Options, protected func(string) bool) []string {
	if protected == nil {
		protected = func(p string) bool { return opts.UserConfigDir != "" && under(p, filepath.Clean(opts.UserConfigDir)) }
	}
	var out []string
	for _, f := range r.Files {
		if !protected(f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Check compares a discovered chain with the record (a chain the caller
// named with --settings or --template needs no trust): each of its
// TrustFiles must be trusted with the hash of the bytes Load parsed (not of a
// second read, which a command could race), and no trusted file may be
// missing from where discovery would have found it before the one it
// found (a command that deletes sub/fence.jsonc hands a run in sub/ to the
// config above it).
func (t Trust) Check(opts Options, r *Resolved, protected func(string) bool) []TrustProblem {
	var out []TrustProblem
	if !opts.Discovered() {
		return nil
	}
	for _, path := range skippedCandidates(opts, r) {
		if e, ok := t.Files[path]; ok {
			out = append(out, TrustProblem{Path: path, Was: e.SHA256})
		}
	}
	for _, path := range r.TrustFiles(opts, protected) {
		now := r.Hashes[path]
		if !t.Trusts(path, now) {
			out = append(out, TrustProblem{Path: path, Now: now, Was: t.Files[path].SHA256})
		}
	}
	return out
}

// Forget removes the trusted files that discovery in opts.Dir passes over
// on its way to what it found in r, and returns them.
func (t *Trust) Forget(opts Options, r *Resolved) []string {
	var out []string
	for _, path := range skippedCandidates(opts, r) {
		if t.Remove(path) {
			out = append(out, path)
		}
	}
	return out
}

// skippedCandidates are the project config paths that discovery tried and
// did not find before the root file of r: every one of them when the root
// is the user config or the builtin default.
func skippedCandidates(opts Options, r *Resolved) []string {
	root := ""
	if len(r.Files) > 0 {
		root = r.Files[0]
	}
	var out []string
	for dir := opts.Dir; ; dir = filepath.Dir(dir) {
		for _, name := range []string{"fence.jsonc", "fence.json"} {
			p := filepath.Join(dir, name)
			if p == root {
				return out
			}
			out = append(out, p)
		}
		if dir == filepath.Dir(dir) {
			return out
		}
	}
}
