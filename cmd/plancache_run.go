package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// planCacheDisabled reports whether the environment turns the cache off
// (FENCE_NO_PLAN_CACHE set to anything but "" or "0").
func planCacheDisabled() bool {
	v := os.Getenv(planCacheOff)
	return v != "" && v != "0"
}

// newPlanCache is the cache for a run with these flags, nil when it is
// off: by --no-plan-cache or FENCE_NO_PLAN_CACHE, without a user cache
// dir, or under a --shell or --shell-login, which plan by the command.
func newPlanCache(flags *pflag.FlagSet, off bool, sh shellFlags) *planCache {
	if off || planCacheDisabled() || sh.mode != "default" || sh.login {
		return nil
	}
	dir := planCacheDir()
	if dir == "" {
		return nil
	}
	// Before the lookup, so that its check of a listing of dir leaves
	// out what the noting left out.
	inputs.SetOwnDir(dir, isEntryName)
	return &planCache{dir: dir, key: planCacheKey(flags)}
}

// lookup returns the entry of the run's key when every read it noted
// still finds the same; nil, with c.why saying why, otherwise.
func (c *planCache) lookup() *cacheEntry {
	if c == nil {
		return nil
	}
	secret, err := sealKey(false)
	if err != nil {
		c.why = fmt.Sprintf("miss: no key: %v", err)
		return nil
	}
	fd, err := openCacheDir(c.dir, false)
	if err != nil {
		c.why = fmt.Sprintf("miss: the cache directory is not used: %v", err)
		return nil
	}
	defer unix.Close(fd)
	b, err := readEntryFile(fd, c.key)
	if errors.Is(err, unix.ENOENT) {
		c.why = "miss: no entry for this directory, flags and environment"
		return nil
	}
	if err != nil {
		c.why = fmt.Sprintf("miss: entry ignored: %v", err)
		return nil
	}
	e, err := decodeEntry(b, c.key, secret)
	if err != nil {
		c.why = fmt.Sprintf("miss: entry ignored: %v", err)
		return nil
	}
	e.restoreAhead()
	if stale, ok := inputs.Check(e.inputs); !ok {
		c.why = fmt.Sprintf("miss: %s is not as when the entry was made", stale)
		return nil
	}
	c.why = fmt.Sprintf("hit: %d reads still find the same", len(e.inputs))
	return e
}

// start begins noting what loading and planning read.
func (c *planCache) start() {
	if c != nil {
		c.rec = inputs.Start()
	}
}

// drop stops noting, keeping nothing: the run stopped before its plan.
func (c *planCache) drop() {
	if c != nil && c.rec != nil {
		c.rec.Stop()
		c.rec = nil
	}
}

// store keeps e, the run's policy and plan, with what making them read,
// unless that depended on more than the reads (c.why says so then).
func (c *planCache) store(e *cacheEntry) error {
	if c == nil || c.rec == nil {
		return nil
	}
	rec := c.rec
	c.drop()
	if taint := rec.Taint(); taint != "" {
		c.why = "not kept: " + taint
		return nil
	}
	e.inputs, e.Key, e.Fence, e.UID = rec.Observations(), c.key, fenceIdentity(), os.Getuid()
	if stale, ok := inputs.Check(e.inputs); !ok {
		// Planning read the disk before it changed it (a directory it
		// created): the next run, on the disk as it is now, keeps one.
		c.why = fmt.Sprintf("not kept: %s changed while planning", stale)
		return nil
	}
	secret, err := sealKey(true)
	if err != nil {
		return err
	}
	b, err := encodeEntry(e, secret)
	if err != nil {
		return err
	}
	fd, err := openCacheDir(c.dir, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := writeEntryFile(fd, c.key, b); err != nil {
		return err
	}
	c.why = "kept"
	return nil
}

// teeWriter copies what goes to w into buf.
type teeWriter struct {
	w   io.Writer
	buf *bytes.Buffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.buf.Write(p)
	return t.w.Write(p)
}

// sayCached tells, for `fence plan`, whether a run with these flags here
// would take a cached plan, and why not; on a hit it says what loading
// said, as the run does, and returns the cached plan.
func sayCached(w io.Writer, flags *pflag.FlagSet) *sandbox.Plan {
	cache := newPlanCache(flags, false, shellFlags{mode: "default"})
	if cache == nil {
		fmt.Fprintf(w, "fence: plan cache: off\n")
		return nil
	}
	var plan *sandbox.Plan
	if e := cache.lookup(); e != nil {
		var err error
		if _, plan, err = e.restore(); err != nil {
			cache.why = fmt.Sprintf("miss: entry ignored: %v", err)
		} else {
			cache.why += " (the plan printed is the cached one)"
			defer w.Write(e.Notes)
		}
	}
	fmt.Fprintf(w, "fence: plan cache: %s\n", cache.why)
	return plan
}
