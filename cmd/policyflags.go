package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

// policyFlags are the flags that choose the policy; every command that
// loads one shares them.
type policyFlags struct {
	settings string
	template string
	debug    bool
	rules    policy.Flags
	stderr   io.Writer
	// dir, when set, is the directory the policy is found and applied
	// from instead of the working directory (--policy-dir).
	dir string
}

func (p *policyFlags) register(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVarP(&p.settings, "settings", "s", "", "use this config file instead of looking for one")
	f.StringVarP(&p.template, "template", "t", "", "use this builtin template instead of looking for a config (see \"fence templates\")")
	f.BoolVarP(&p.debug, "debug", "d", false, "print what fence does and why")
	r := &p.rules
	f.StringArrayVar(&r.AllowRead, "allow-read", nil, "also allow reading `PATH` (repeatable; every deny still wins)")
	f.StringArrayVar(&r.AllowWrite, "allow-write", nil, "also allow writing `PATH` (repeatable; every deny still wins)")
	f.StringArrayVar(&r.DenyRead, "deny-read", nil, "deny reading `PATH`, whatever the config allows (repeatable)")
	f.StringArrayVar(&r.DenyWrite, "deny-write", nil, "deny writing `PATH`, whatever the config allows (repeatable)")
	f.StringArrayVar(&r.AllowDomains, "allow-domain", nil, "also allow connections to `DOMAIN` (repeatable)")
	f.StringArrayVar(&r.DenyDomains, "deny-domain", nil, "deny connections to `DOMAIN`, whatever the config allows (repeatable)")
	f.StringArrayVar(&r.DenyCommands, "deny-command", nil, "deny `COMMAND`; no command.allow lifts it (repeatable)")
	f.BoolVar(&r.NoNetwork, "no-network", false, "no network at all: no domains, local ports or unix sockets")
	f.BoolVar(&r.NoRefusalSummary, "no-refusal-summary", false, "say nothing at exit about the connections the proxies refused (network.refusalSummary: false); -m still names each")
	f.StringVar(&r.Mode, "mode", "", "where writes may go: read-only, workspace-write (the git top level, else the working directory) or full")
}

// options says where to look for config, from the flags and environment.
func (p *policyFlags) options() (policy.Options, error) {
	if p.settings != "" && p.template != "" {
		return policy.Options{}, errors.New("give --settings or --template, not both")
	}
	dir, err := os.Getwd()
	if err != nil {
		return policy.Options{}, fmt.Errorf("get working directory: %w", err)
	}
	if p.dir != "" {
		dir = p.dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return policy.Options{}, fmt.Errorf("find home directory: %w", err)
	}
	config := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	return policy.Options{
		Settings:      p.settings,
		Template:      p.template,
		Dir:           dir,
		Home:          home,
		UserConfigDir: filepath.Join(config, "fence"),
	}, nil
}

// load finds, validates and merges the policy. It refuses a discovered
// config the trust record does not vouch for: a sandboxed command may have
// written it.
func (p *policyFlags) load() (*policy.Resolved, policy.Options, error) {
	res, opts, problems, err := p.loadUntrusted()
	if err != nil {
		return nil, opts, err
	}
	if len(problems) > 0 {
		return nil, opts, &untrustedError{problems}
	}
	return res, opts, nil
}

// loadUntrusted loads as load does, but returns the files trust does not
// vouch for instead of refusing them, for commands that only show the
// policy.
func (p *policyFlags) loadUntrusted() (*policy.Resolved, policy.Options, []policy.TrustProblem, error) {
	opts, err := p.options()
	if err != nil {
		return nil, opts, nil, err
	}
	res, err := policy.Load(opts)
	if err != nil {
		return nil, opts, nil, err
	}
	problems, err := checkTrust(opts, res)
	if err != nil {
		return nil, opts, nil, err
	}
	if err := res.Apply(p.rules, opts.Dir); err != nil {
		return nil, opts, nil, err
	}
	if p.debug {
		for _, s := range res.Chain {
			fmt.Fprintf(p.stderr, "fence: debug: config: %s\n", s.Label())
		}
	}
	return res, opts, problems, nil
}
