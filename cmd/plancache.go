package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// The plan cache: a run whose inputs are those of an earlier one takes
// that run's policy and plan instead of loading and planning again.
//
// An entry is found by a key of what the run is given: the fence binary
// (its path and file identity, and its version), the user and group,
// the working directory, every flag but the command, and the whole
// environment. The command is not in the key (an agent runs another one
// every time): what depends on it, the argv and the preflight of the
// command line, is done on every run against the cached policy.
//
// What the run reads of the disk is not in the key but in the entry:
// every read loading and planning make goes through package inputs,
// which notes it (a config file's content, a directory's listing, a
// path's kind, owner and times, a link's target, a PATH lookup, the
// kernel's socket table). A hit redoes each read and takes the entry
// only if every one finds what it found then; otherwise the run plans
// afresh and replaces the entry. A plan whose making depended on
// something no read captures (a time budget that ran out) or on a disk
// that changed while it was made (this run created a directory it
// later read) is not kept.

// planCacheFormat heads every entry; an entry of another format is
// ignored.
const planCacheFormat = "fence plan cache 2\n"

// planCacheOff disables the cache, as --no-plan-cache does.
const planCacheOff = "FENCE_NO_PLAN_CACHE"

// cacheEntry is what the cache keeps of a run.
type cacheEntry struct {
	Key   string
	Fence string // fenceIdentity
	UID   int
	// Reads are the observations of the reads planning made, packed
	// (see packReads): gob would decode them string by string.
	Reads  []byte
	Policy []byte // policy.EncodeSnapshot
	Plan   []byte // Plan.MarshalData
	Chain  policy.Chain
	// AllowGitConfig is the chain's filesystem.allowGitConfig.
	AllowGitConfig bool
	// Notes are what loading wrote to stderr (notes, warnings, -d
	// lines), said again on a hit.
	Notes []byte

	// inputs are the observations Reads packs.
	inputs []inputs.Observation
	// restored is the decoding of Policy and Plan, begun by lookup
	// beside the check of the reads (see restoreAhead); not kept.
	restored chan restoredEntry
}

// restoredEntry is an entry's policy and plan, decoded.
type restoredEntry struct {
	pol  *policy.Policy
	plan *sandbox.Plan
	err  error
}

// planCache is the cache as one run uses it; a nil *planCache is off.
type planCache struct {
	dir string // where entries live (see planCacheDir)
	key string
	rec *inputs.Record // while the run loads and plans
	// why says, for -d and `fence plan`, how the lookup went.
	why string
}

// planCacheKey is the key of a run with these flags, in this process:
// the hash of its parts, each given with its length (see keyWriter), so
// that no two runs' parts hash alike.
func planCacheKey(flags *pflag.FlagSet) string {
	k := keyWriter{sha256.New()}
	dir, _ := os.Getwd()
	k.field("run", planCacheFormat, fenceIdentity(), runtime.GOOS+"/"+runtime.GOARCH,
		fmt.Sprintf("%d:%d:%d", os.Getuid(), os.Getgid(), os.Geteuid()), dir, invokedAs)
	for _, f := range keyFlags(flags) {
		k.field("flag", f...)
	}
	env := slices.Clone(os.Environ())
	slices.Sort(env)
	k.field("env", env...)
	return hex.EncodeToString(k.h.Sum(nil))
}

// keyWriter writes a key's parts to a hash without ambiguity: each part
// is a tag, a count of values and the values, each prefixed with its
// length.
type keyWriter struct{ h hash.Hash }

func (k keyWriter) field(tag string, values ...string) {
	k.str(tag)
	var n [binary.MaxVarintLen64]byte
	k.h.Write(n[:binary.PutUvarint(n[:], uint64(len(values)))])
	for _, v := range values {
		k.str(v)
	}
}

func (k keyWriter) str(s string) {
	var n [binary.MaxVarintLen64]byte
	k.h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	io.WriteString(k.h, s)
}

// keyFlags are the flags given, each as its name and its values, but the
// command (-c) and the ones of `fence plan` alone, so that `fence plan`
// finds the entry of a run with the same flags.
func keyFlags(flags *pflag.FlagSet) [][]string {
	var out [][]string
	flags.Visit(func(f *pflag.Flag) {
		if f.Name == "command" || f.Name == "platform" || f.Name == "no-plan-cache" {
			return
		}
		v := []string{f.Value.String()}
		if s, ok := f.Value.(pflag.SliceValue); ok {
			v = s.GetSlice()
		}
		out = append(out, append([]string{f.Name}, v...))
	})
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// fenceIdentity names the running fence binary: its version, path and
// file identity (device, inode, size, modification and change times),
// so that a rebuilt or replaced fence never takes another's entries.
func fenceIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	return version() + "\x00" + exe + "\x00" + inputs.StatSeen(os.Stat(exe))
}

// encodeEntry is e as an entry file's bytes.
func encodeEntry(e *cacheEntry, secret []byte) ([]byte, error) {
	e.Reads = packReads(e.inputs)
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(e); err != nil {
		return nil, fmt.Errorf("encode plan cache entry: %w", err)
	}
	sealed, err := seal(secret, e.Key, buf.Bytes())
	if err != nil {
		return nil, err
	}
	return append([]byte(planCacheFormat), sealed...), nil
}

// decodeEntry is the entry of an entry file's bytes, checked to be of
// this format, sealed with secret for this key, of this fence and this
// user.
func decodeEntry(b []byte, key string, secret []byte) (*cacheEntry, error) {
	rest, ok := bytes.CutPrefix(b, []byte(planCacheFormat))
	if !ok {
		return nil, fmt.Errorf("not an entry of this format")
	}
	plain, err := unseal(secret, key, rest)
	if err != nil {
		return nil, err
	}
	var e cacheEntry
	if err := gob.NewDecoder(bytes.NewReader(plain)).Decode(&e); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	switch {
	case e.Key != key:
		return nil, fmt.Errorf("an entry of another key")
	case e.Fence != fenceIdentity():
		return nil, fmt.Errorf("an entry of another fence binary")
	case e.UID != os.Getuid():
		return nil, fmt.Errorf("an entry of uid %d", e.UID)
	case len(e.Plan) == 0:
		return nil, fmt.Errorf("an entry without a plan")
	}
	if e.inputs, err = unpackReads(e.Reads); err != nil {
		return nil, err
	}
	if len(e.inputs) == 0 {
		// Every plan reads something (its config files, the working
		// directory): an entry with no reads to check would be taken
		// on trust.
		return nil, fmt.Errorf("an entry without reads")
	}
	return &e, nil
}

// restoreAhead begins decoding the entry's policy and plan in a
// goroutine of its own, so that it runs while the reads are checked; a
// miss drops what it decoded.
func (e *cacheEntry) restoreAhead() {
	e.restored = make(chan restoredEntry, 1)
	go func() {
		pol, plan, err := e.decode()
		e.restored <- restoredEntry{pol, plan, err}
	}()
}

// restore is the policy and plan of an entry, as the run that made them
// had them: what restoreAhead decoded, when it began.
func (e *cacheEntry) restore() (*policy.Policy, *sandbox.Plan, error) {
	if e.restored == nil {
		return e.decode()
	}
	r := <-e.restored
	return r.pol, r.plan, r.err
}

// decode decodes the entry's policy and plan.
func (e *cacheEntry) decode() (*policy.Policy, *sandbox.Plan, error) {
	pol, err := policy.DecodeSnapshot(e.Policy)
	if err != nil {
		return nil, nil, err
	}
	plan, err := sandbox.UnmarshalPlanData(e.Plan)
	if err != nil {
		return nil, nil, err
	}
	return pol, plan, nil
}
