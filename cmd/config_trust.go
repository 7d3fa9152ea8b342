package cmd

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

type trustOptions struct {
	policy *policyFlags
	list   bool
}

func newConfigTrustCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	o := &trustOptions{policy: pf}
	c := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust the config files that apply here (or FILE and what it extends) as they are now; print what was trusted",
		Long: "fence runs under a config it found by looking in the working directory and above only while\n" +
			"each of its files holds the bytes you trusted: a sandboxed command may have written it.\n" +
			"Review the policy with \"fence config show\" first. Files in the user config dir need no trust.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if o.list {
				return o.printList(args, stdout)
			}
			return o.trust(args, stderr)
		},
	}
	c.Flags().BoolVar(&o.list, "list", false, "print the trust record (sha256 and path, one file a line) and change nothing")
	return c
}

func newConfigUntrustCmd(pf *policyFlags, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "untrust FILE...",
		Short: "Forget that FILE was trusted: a run that discovers it refuses until it is trusted again",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(_ *cobra.Command, args []string) error { return untrust(pf, args, stderr) },
	}
}

func (o *trustOptions) trust(args []string, stderr io.Writer) error {
	if o.policy.settings != "" || o.policy.template != "" {
		return errors.New("--settings and --template need no trust; name the file to trust: fence config trust FILE")
	}
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	if len(args) == 1 {
		opts.Settings = args[0]
	}
	res, err := policy.Load(opts)
	if err != nil {
		return fmt.Errorf("nothing was trusted: %w", err)
	}
	files := res.TrustFiles(opts, trustExempt(opts))
	var was []string
	var forgot []string
	err = trustStore{opts.UserConfigDir}.update(func(rec *policy.Trust) {
		was = make([]string, len(files))
		for i, f := range files {
			was[i] = rec.Add(f, res.Hashes[f], now())
		}
		if len(args) == 0 {
			forgot = rec.Forget(opts, res)
		}
	})
	if err != nil {
		return err
	}
	for _, f := range forgot {
		fmt.Fprintf(stderr, "fence: forgot %s, which was trusted and is gone\n", f)
	}
	for i, f := range files {
		printTrusted(stderr, f, res.Hashes[f], was[i])
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "fence: nothing to trust: the policy comes from %s, which needs none (fence protects the user config dir, and builtin templates are part of fence)\n", res.Chain[0].Label())
	}
	return nil
}

// printTrusted says what was trusted, and what was trusted before when
// the bytes changed.
func printTrusted(w io.Writer, path, hash, was string) {
	switch was {
	case hash:
		fmt.Fprintf(w, "fence: %s was trusted already (sha256 %s)\n", path, hash)
	case "":
		fmt.Fprintf(w, "fence: trusted %s (sha256 %s)\n", path, hash)
	default:
		fmt.Fprintf(w, "fence: trusted %s (sha256 %s); it changed since it was trusted as sha256 %s\n", path, hash, was)
	}
}

// printList prints the record as sha256sum does, sorted by path.
func (o *trustOptions) printList(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return errors.New("--list takes no FILE")
	}
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	rec, err := trustStore{opts.UserConfigDir}.read()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(rec.Files))
	for p := range rec.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Fprintf(stdout, "%s  %s\n", rec.Files[p].SHA256, p)
	}
	return nil
}

func untrust(pf *policyFlags, args []string, stderr io.Writer) error {
	opts, err := pf.options()
	if err != nil {
		return err
	}
	var removed, missing []string
	err = trustStore{opts.UserConfigDir}.update(func(rec *policy.Trust) {
		for _, a := range args {
			p := a
			if !filepath.IsAbs(p) {
				p = filepath.Join(opts.Dir, p)
			}
			p = filepath.Clean(p)
			if rec.Remove(p) {
				removed = append(removed, p)
			} else {
				missing = append(missing, p)
			}
		}
	})
	if err != nil {
		return err
	}
	for _, p := range removed {
		fmt.Fprintf(stderr, "fence: no longer trusted: %s\n", p)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%q was not trusted", missing[0])
	}
	return nil
}

// recordTrust trusts paths, which hold data as fence just wrote it, unless the user config
// dir protects it anyway, and says so.
func recordTrust(opts policy.Options, stderr io.Writer, data []byte, paths ...string) error {
	protected := trustExempt(opts)
	var trusted []string
	for _, p := range paths {
		if !protected(p) && !slices.Contains(trusted, p) {
			trusted = append(trusted, p)
		}
	}
	if len(trusted) == 0 {
		return nil
	}
	hash := policy.HashConfig(data)
	err := trustStore{opts.UserConfigDir}.update(func(rec *policy.Trust) {
		for _, p := range trusted {
			rec.Add(p, hash, now())
		}
	})
	if err != nil {
		return fmt.Errorf("trust what fence wrote: %w", err)
	}
	for _, p := range trusted {
		fmt.Fprintf(stderr, "fence: trusted %s as written (sha256 %s)\n", p, hash)
	}
	return nil
}
