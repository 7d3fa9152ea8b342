package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

type initOptions struct {
	policy *policyFlags
	print  bool
	output string
	user   bool
	force  bool
	// minimal and scaffold choose the text: extends alone, or every key
	// of the schema commented out; neither is the commented starter.
	minimal, scaffold bool
}

func newConfigInitCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	o := &initOptions{policy: pf}
	c := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter fence.jsonc (extends the code template unless -t says otherwise)",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return o.run(stdout, stderr) },
	}
	f := c.Flags()
	f.BoolVar(&o.print, "print", false, "print the starter config instead of writing it")
	f.StringVarP(&o.output, "output", "o", "", "write to this file instead of ./fence.jsonc")
	f.BoolVar(&o.user, "user", false, "write the user config instead of ./fence.jsonc")
	f.BoolVar(&o.force, "force", false, "replace an existing file")
	f.BoolVar(&o.minimal, "minimal", false, "write the smallest useful config: extends alone")
	f.BoolVar(&o.scaffold, "scaffold", false, "write every key of the schema, each commented out with its description")
	return c
}

func (o *initOptions) run(stdout, stderr io.Writer) error {
	if o.policy.settings != "" {
		return errors.New("--settings does not apply to init: use -o FILE to choose where to write")
	}
	base := o.policy.template
	if base == "" {
		base = "code"
	}
	text, err := o.text(base)
	if err != nil {
		return err
	}
	if o.print {
		_, err := stdout.Write(text)
		return err
	}
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	target, err := o.target(opts)
	if err != nil {
		return err
	}
	if err := writeAtomic(target, text, o.force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: wrote %s (extends %q); see what it resolves to with: fence config show\n", target, base)
	return recordTrust(opts, stderr, text, target)
}

// text is the config to write: the starter, or --minimal's or
// --scaffold's.
func (o *initOptions) text(base string) ([]byte, error) {
	switch {
	case o.minimal && o.scaffold:
		return nil, errors.New("give --minimal or --scaffold, not both")
	case o.minimal:
		return policy.Minimal(base)
	case o.scaffold:
		return policy.Scaffold(base)
	}
	return policy.Starter(base)
}

func (o *initOptions) target(opts policy.Options) (string, error) {
	switch {
	case o.user && o.output != "":
		return "", errors.New("give --user or --output, not both")
	case o.user:
		return opts.UserConfigPaths()[0], nil
	case o.output != "":
		return filepath.Abs(o.output)
	}
	return filepath.Join(opts.Dir, "fence.jsonc"), nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory, so that a reader never sees half a config. Without force it
// refuses to replace an existing file, even one created meanwhile.
func writeAtomic(path string, data []byte, force bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %q: %w", dir, err)
	}
	tmp, err := writeTemp(path, data, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if force {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("replace %q: %w", path, err)
		}
		return nil
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%q already exists: use --force to replace it", path)
		}
		return fmt.Errorf("create %q: %w", path, err)
	}
	return nil
}
