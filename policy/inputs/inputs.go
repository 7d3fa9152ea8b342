// Package inputs observes what fence reads of the host while it loads a
// policy and plans a run, so that the plan cache can tell whether a
// cached plan still holds: every read goes through one of its functions
// (Lstat, Stat, ReadDir, ReadFile, Open, Readlink, EvalSymlinks,
// LookPath, Access, ...), which does the read and, while a Record is
// active, notes the operation, the path and a digest of what it found.
// Check redoes each noted read and reports the first whose result is no
// longer the same.
//
// It imports nothing of fence's, so that policy can use it; it decides
// nothing: a source scan in cmd keeps planning code from reading the
// host any other way.
package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Observation is one read: the operation, its path and a digest of its
// result (a file's kind, mode, owner, size, modification time and
// identity; a listing's names and kinds; a file's content hash; a link's
// target; an error's kind).
type Observation struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	Seen string `json:"seen"`
}

func (o Observation) String() string { return o.Op + " " + o.Path }

// Record collects the observations of one load and plan.
type Record struct {
	mu    sync.Mutex
	obs   []Observation
	index map[[2]string]int
	// taint, when set, says why the plan must not be reused (a result
	// that changed while planning, a time budget that ran out).
	taint string
}

// ownDir is a directory of fence's own whose entries of its own making
// are left out of what is noted: the plan cache's, which every run
// changes. Only regular files directly in it, named as own says, are
// left out, from its listings and from the stats of them; anything else
// in it (a directory or a link of an entry's name, and whatever is below
// one) is noted as anywhere else.
var ownDir struct {
	sync.RWMutex
	dir string
	own func(name string) bool
}

// SetOwnDir names fence's own directory and its entries' names.
func SetOwnDir(dir string, own func(name string) bool) {
	ownDir.Lock()
	defer ownDir.Unlock()
	ownDir.dir, ownDir.own = dir, own
}

// ownEntry reports whether p is named as an entry of fence's own
// directory, directly in it.
func ownEntry(p string) bool {
	ownDir.RLock()
	defer ownDir.RUnlock()
	return ownDir.dir != "" && filepath.Dir(p) == ownDir.dir && ownDir.own(filepath.Base(p))
}

// isOwnDir reports whether dir is fence's own directory.
func isOwnDir(dir string) bool {
	ownDir.RLock()
	defer ownDir.RUnlock()
	return ownDir.dir != "" && dir == ownDir.dir
}

// ownFile reports whether a stat of p that found fi is one of an entry
// of fence's own: a regular file of an entry's name in its directory,
// not a link to one (followed says the stat followed links).
func ownFile(p string, fi fs.FileInfo, err error, followed bool) bool {
	if err != nil || !fi.Mode().IsRegular() || !ownEntry(p) {
		return false
	}
	if followed {
		fi, err = os.Lstat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	return true
}

// foreignEntries drops from a listing of fence's own directory the
// entries of its own making.
func foreignEntries(dir string, entries []fs.DirEntry) []fs.DirEntry {
	ownDir.RLock()
	d := ownDir.dir
	ownDir.RUnlock()
	if d == "" || dir != d {
		return entries
	}
	var out []fs.DirEntry
	for _, e := range entries {
		if !e.Type().IsRegular() || !ownEntry(filepath.Join(dir, e.Name())) {
			out = append(out, e)
		}
	}
	return out
}

var active atomic.Pointer[Record]

// Start begins recording; reads made until Stop are noted in the
// returned Record. One Record is active at a time.
func Start() *Record {
	r := &Record{index: map[[2]string]int{}}
	active.Store(r)
	return r
}

// Stop ends the recording of r.
func (r *Record) Stop() { active.CompareAndSwap(r, nil) }

// Recording reports whether reads are being noted: callers that read in
// a way of their own (see NoteInodes) skip the digest otherwise.
func Recording() bool { return active.Load() != nil }

// Observations are the reads noted, in the order first made.
func (r *Record) Observations() []Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Observation(nil), r.obs...)
}

// Taint returns why the plan made during r may not be reused, or "".
func (r *Record) Taint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.taint
}

// Taint marks the active recording as one whose plan must not be
// reused, with why: planning depended on something no observation
// captures (a clock, a budget that ran out).
func Taint(why string) {
	if r := active.Load(); r != nil {
		r.mu.Lock()
		if r.taint == "" {
			r.taint = why
		}
		r.mu.Unlock()
	}
}

// Note records that op on path found seen. The same read met again with
// another result taints the recording: the host changed while fence
// planned (or planning changed it), and only a plan made on a host at
// rest is kept.
func Note(op, path, seen string) {
	r := active.Load()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]string{op, path}
	if i, ok := r.index[k]; ok {
		if r.obs[i].Seen != seen && r.taint == "" {
			r.taint = fmt.Sprintf("%s %s changed while planning", op, path)
		}
		return
	}
	r.index[k] = len(r.obs)
	r.obs = append(r.obs, Observation{Op: op, Path: path, Seen: seen})
}

// Checker redoes a read of its operation and returns the digest of what
// it finds now.
type Checker func(path string) string

var (
	checkersMu sync.RWMutex
	checkers   = map[string]Checker{}
)

// Register names the Checker of op; the operations of this package are
// registered already, a caller that notes an operation of its own (the
// kernel's socket table) registers it at init.
func Register(op string, c Checker) {
	checkersMu.Lock()
	defer checkersMu.Unlock()
	checkers[op] = c
}

// Check redoes every observation and returns one whose result differs
// now, or which no Checker knows (the first such that it met); ok is
// true when all still hold. The reads are spread over as many
// goroutines as the runtime runs at once (most are system calls that
// walk a path), and each stops at the first one found stale.
func Check(obs []Observation) (stale Observation, ok bool) {
	checkersMu.RLock()
	defer checkersMu.RUnlock()
	workers := min(runtime.GOMAXPROCS(0), (len(obs)+checkBatch-1)/checkBatch)
	if workers <= 1 {
		i := checkFrom(obs, 0, 1, nil)
		return staleAt(obs, i)
	}
	var (
		found atomic.Bool
		wg    sync.WaitGroup
	)
	first := make([]int, workers)
	for w := range workers {
		wg.Go(func() { first[w] = checkFrom(obs, w, workers, &found) })
	}
	wg.Wait()
	return staleAt(obs, slices.Min(first))
}

// checkBatch is the fewest observations worth a goroutine of their own.
const checkBatch = 64

// checkFrom checks obs[start], obs[start+step], ... and returns the index
// of the first that no longer holds, or len(obs); it stops early, too,
// once found is set by another, and sets it when it finds one.
func checkFrom(obs []Observation, start, step int, found *atomic.Bool) int {
	for i := start; i < len(obs); i += step {
		if found != nil && found.Load() {
			return len(obs)
		}
		if !holds(obs[i]) {
			if found != nil {
				found.Store(true)
			}
			return i
		}
	}
	return len(obs)
}

// staleAt is the result of Check for the index checkFrom returned.
func staleAt(obs []Observation, i int) (Observation, bool) {
	if i < len(obs) {
		return obs[i], false
	}
	return Observation{}, true
}

// holds reports whether o's read still finds what it found (with
// checkersMu held for reading).
func holds(o Observation) bool {
	if same, listing := checkListing(o); listing {
		return same
	}
	c := checkers[o.Op]
	return c != nil && c(o.Path) == o.Seen
}

// Digest is the hex SHA-256 of b, cut to 128 bits.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
