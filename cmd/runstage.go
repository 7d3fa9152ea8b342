package cmd

import (
	"bytes"
	"fmt"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// loaded is a run's policy as loading made it, or as the plan cache
// kept it, with its plan when the cache had one.
type loaded struct {
	pol            *policy.Policy
	chain          policy.Chain
	allowGitConfig bool
	us             *sandbox.UserShell
	disk           *sandbox.Disk
	plan           *sandbox.Plan // set on a hit
	notes          bytes.Buffer  // what loading said, for the entry
}

// load is the run's policy: the plan cache's, on a hit, else loaded,
// compiled and fixed for the disk, with what loading says said on the
// way (and kept for the entry).
func (o *runOptions) load(args []string, cache *planCache) (*loaded, error) {
	if e := cache.lookup(); e != nil {
		pol, plan, err := e.restore()
		if err == nil {
			o.debugCache(cache)
			o.stderr.Write(e.Notes)
			return &loaded{pol: pol, chain: e.Chain, allowGitConfig: e.AllowGitConfig, plan: plan}, nil
		}
		cache.why = fmt.Sprintf("miss: entry ignored: %v", err)
	}
	o.debugCache(cache)
	if o.resumeGC != nil {
		o.resumeGC() // planning afresh makes more than a start-up's garbage
	}
	cache.start()
	l := &loaded{}
	stderr, pstderr := o.stderr, o.policy.stderr
	o.stderr, o.policy.stderr = teeWriter{stderr, &l.notes}, teeWriter{pstderr, &l.notes}
	defer func() { o.stderr, o.policy.stderr = stderr, pstderr }()
	res, opts, err := o.policy.load()
	if err != nil {
		return nil, err
	}
	if o.audit != "" {
		res.Config.Audit.File = o.audit
	}
	l.pol = compileResolved(res, opts)
	l.chain, l.allowGitConfig = res.Chain, res.Config.Filesystem.AllowGitConfig
	if l.us, err = o.up.apply(l.pol, o.shell, args, opts.Dir); err != nil {
		return nil, err
	}
	if l.disk, err = o.prepareHost(l.pol, res, opts); err != nil {
		return nil, err
	}
	// The cache directory exists before the plan, with the cache off
	// too, so that the mounts make it read-only (policy.KeyPlanCache).
	if err := makePlanCacheDir(planCacheDir()); err != nil && o.policy.debug {
		fmt.Fprintf(o.stderr, "fence: debug: plan cache: %v\n", err)
	}
	return l, nil
}

// keep stores the run's freshly made plan in the cache, before the run
// adds what is its own (monitor, limits, forwards); a failure to keep it
// costs the next run time only, and says so under -d.
func (o *runOptions) keep(cache *planCache, l *loaded, plan *sandbox.Plan) {
	if cache == nil {
		return
	}
	if why := planCacheSecret(l.pol); why != "" {
		cache.drop()
		cache.why = "not kept: " + why
		o.debugCache(cache)
		return
	}
	pol, err := policy.EncodeSnapshot(l.pol)
	var data []byte
	if err == nil {
		data, err = plan.MarshalData()
	}
	if err == nil {
		err = cache.store(&cacheEntry{Policy: pol, Plan: data, Chain: l.chain, AllowGitConfig: l.allowGitConfig, Notes: l.notes.Bytes()})
	}
	if err != nil {
		cache.why = fmt.Sprintf("not kept: %v", err)
	}
	o.debugCache(cache)
}

// planCacheSecret says why a plan must not be written to the cache for
// a secret it holds that the user's session does not have otherwise
// (the upstream proxy's password, which only an unreadable config file
// holds); "" when none.
func planCacheSecret(pol *policy.Policy) string {
	if pol.Upstream != nil && pol.Upstream.Authorization != "" {
		return "the plan holds network.upstreamProxy's credentials"
	}
	return ""
}

// debugCache says under -d how the lookup went.
func (o *runOptions) debugCache(cache *planCache) {
	if cache != nil && o.policy.debug {
		fmt.Fprintf(o.stderr, "fence: debug: plan cache: %s\n", cache.why)
	}
}

// planRun is the run's plan for o: the cached one with this run's argv
// and limits (which take the host's memory as it is now), or a fresh
// one, kept in the cache. Every other option is a flag, in the key.
func (o *runOptions) planRun(cache *planCache, l *loaded, po sandbox.Options) (*sandbox.Plan, error) {
	if l.plan != nil {
		return l.plan.WithCommand(po)
	}
	plan, err := planFor(l.pol, l.disk, po)
	if err != nil {
		return nil, err
	}
	o.keep(cache, l, plan)
	return plan, nil
}
