package cmd

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// grantKeys maps "allow read" and the like to the list they add to.
var grantKeys = map[string]string{
	"allow read":    "filesystem.allowRead",
	"allow write":   "filesystem.allowWrite",
	"allow exec":    "filesystem.allowExecute",
	"allow domain":  "network.allowedDomains",
	"allow command": "command.allow",
	"deny read":     "filesystem.denyRead",
	"deny write":    "filesystem.denyWrite",
	"deny domain":   "network.deniedDomains",
	"deny command":  "command.deny",
}

// systemConfigDirs hold files no grant may edit: they belong to the
// system, not to a project.
var systemConfigDirs = []string{"/etc", "/usr", "/lib", "/opt"}

type grantOptions struct {
	policy  *policyFlags
	verb    string // allow or deny
	file    string
	domains []string
}

func newConfigGrantCmd(verb string, pf *policyFlags, stderr io.Writer) *cobra.Command {
	o := &grantOptions{policy: pf, verb: verb}
	kinds := "read|write|exec PATH... | domain DOMAIN... | command 'COMMAND'..."
	if verb == "deny" {
		kinds = "read|write PATH... | domain DOMAIN... | command 'COMMAND'..."
	}
	c := &cobra.Command{
		Use:   verb + " " + kinds,
		Short: "Add " + verb + " rules to the project's fence.jsonc, keeping its comments (the old file is kept as fence.jsonc.bak.<time>)",
		RunE:  func(_ *cobra.Command, args []string) error { return o.run(args, stderr) },
	}
	c.Flags().StringVar(&o.file, "file", "", "edit this config file instead of the project's")
	c.Flags().StringArrayVar(&o.domains, "domain", nil, "also add `DOMAIN` to the network rules (repeatable)")
	return c
}

func (o *grantOptions) run(args []string, stderr io.Writer) error {
	grants, err := o.grants(args)
	if err != nil {
		return err
	}
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	path, named, err := grantTarget(opts, o.file)
	if err != nil {
		return err
	}
	e, err := readForEdit(path)
	if err != nil {
		return err
	}
	e.new = e.old
	if e.old == nil {
		e.new = newProjectFile(opts)
	}
	discovered := ""
	if o.file == "" {
		discovered = named
	}
	before := loadedEdit(opts, e, discovered)
	var added []grant
	for _, g := range grants {
		if holds := before.holds(g); holds != "" {
			fmt.Fprintf(stderr, "fence: %s: nothing changed\n", holds)
			continue
		}
		out, ok, err := policy.AddRule(path, e.new, g.key, g.value)
		if err != nil {
			return err
		}
		if ok {
			e.new = out
			added = append(added, g)
		} else {
			fmt.Fprintf(stderr, "fence: %s in %s already holds %q\n", g.key, path, g.value)
		}
	}
	if len(added) == 0 {
		return nil
	}
	if err := stillDenied(opts, e, discovered, added); err != nil {
		return err
	}
	wasTrusted, err := editTrusted(opts, e, path, named)
	if err != nil {
		return err
	}
	if err := e.commit(); err != nil {
		return err
	}
	for _, g := range added {
		fmt.Fprintf(stderr, "fence: added %q to %s in %s\n", g.value, g.key, path)
	}
	if e.backup != "" {
		fmt.Fprintf(stderr, "fence: the previous version is kept as %s\n", filepath.Base(e.backup))
	}
	if !wasTrusted {
		fmt.Fprintf(stderr, "fence: warning: %s was not trusted before this edit, so it is not trusted now: review the policy with fence config show, then trust it with: fence config trust %s\n", path, shellQuote(named))
		return nil
	}
	return recordTrust(opts, stderr, e.new, named, path)
}

// editTrusted reports whether the file an edit starts from was trusted
// (under the name discovery reads or its real path), or is new: only then
// does fence trust what it writes, or an edit would launder the bytes a
// sandboxed command planted.
func editTrusted(opts policy.Options, e *configEdit, paths ...string) (bool, error) {
	if e.old == nil {
		return true, nil
	}
	rec, err := trustStore{opts.UserConfigDir}.read()
	if err != nil {
		return false, err
	}
	hash := policy.HashConfig(e.old)
	return slices.ContainsFunc(paths, func(p string) bool { return rec.Trusts(p, hash) }), nil
}

// grant is one entry to add to one list.
type grant struct {
	key, value string
	access     string // read, write or exec for a path grant
	path       string // the resolved path for a path grant
}

// grantAccess is the access a path grant's list is about.
var grantAccess = map[string]string{
	"filesystem.allowRead": "read", "filesystem.allowWrite": "write", "filesystem.allowExecute": "exec",
	"filesystem.denyRead": "read", "filesystem.denyWrite": "write",
}

// allows reports whether g adds to an allow list (a deny grant adds to a
// deny list).
func (g grant) allows() bool {
	return strings.HasPrefix(g.key, "filesystem.allow") || g.key == "network.allowedDomains" || g.key == "command.allow"
}

// grants turns the arguments into entries: paths resolved as the sandbox
// resolves them and written absolute (or under ~/), so that the rule means
// the same from every directory.
func (o *grantOptions) grants(args []string) ([]grant, error) {
	var out []grant
	for _, d := range o.domains {
		out = append(out, grant{key: grantKeys[o.verb+" domain"], value: d})
	}
	if len(args) == 0 {
		if len(out) == 0 {
			return nil, fmt.Errorf("say what to %s: fence config %s read|write PATH, domain DOMAIN or command 'COMMAND'", o.verb, o.verb)
		}
		return out, nil
	}
	key, ok := grantKeys[o.verb+" "+args[0]]
	if !ok {
		return nil, fmt.Errorf("cannot %s %q: want read, write, exec (allow only), domain or command", o.verb, args[0])
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("fence config %s %s: give at least one value", o.verb, args[0])
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	for _, v := range args[1:] {
		g := grant{key: key, value: v}
		if strings.HasPrefix(key, "filesystem.") {
			g.access = grantAccess[key]
			g.path, g.value = grantPath(v, dir, home)
		}
		out = append(out, g)
	}
	return out, nil
}

// grantPath makes a path argument absolute and canonical, or keeps a glob
// as a pattern: one starting "**/" stays relative to wherever fence runs,
// others are anchored at dir. Paths under home are written with "~/".
func grantPath(arg, dir, home string) (resolved, pattern string) {
	switch {
	case strings.HasPrefix(arg, "**/"):
		return "", arg
	case strings.ContainsAny(arg, "*?[{"):
		return "", tildePath(policy.Expand(arg, dir, home), home)
	}
	resolved = sandbox.ResolvePath(policy.Expand(arg, dir, home), dir)
	return resolved, tildePath(resolved, home)
}

func tildePath(p, home string) string {
	if home != "" && home != "/" && strings.HasPrefix(p, home+"/") {
		return "~/" + p[len(home)+1:]
	}
	return p
}

// grantTarget picks the file to edit: --file, else fence.jsonc or
// fence.json at the project root (the git top level, else the working
// directory), else a new fence.jsonc there. It returns the file's real
// path, and the path as named (as discovery reads it). It refuses the user
// config, a system file, and a link that leads out of the project.
func grantTarget(opts policy.Options, file string) (string, string, error) {
	var path string
	if file != "" {
		path = filepath.Join(opts.Dir, file)
		if filepath.IsAbs(file) {
			path = filepath.Clean(file)
		}
	} else {
		var err error
		if path, err = projectFile(opts.Dir); err != nil {
			return "", "", err
		}
	}
	real := sandbox.ResolvePath(path, opts.Dir)
	// A link, the file's or a directory's on the way, must not lead out
	// of the project the path names.
	root := policy.WorkspaceRoot(filepath.Dir(path))
	if project := sandbox.ResolvePath(root, opts.Dir); real != path && !under(real, project) {
		return "", "", fmt.Errorf("refusing to edit %s: it is a link to %s, outside the project %s", path, real, project)
	}
	userDir := sandbox.ResolvePath(opts.UserConfigDir, opts.Dir)
	if under(real, userDir) || slices.Contains(opts.LegacyUserConfigPaths(), path) {
		return "", "", fmt.Errorf("refusing to edit %s: it is the user config, which applies to every project; edit it by hand if you mean to", real)
	}
	for _, d := range systemConfigDirs {
		if under(real, d) {
			return "", "", fmt.Errorf("refusing to edit %s: it is a system file; edit it by hand if you mean to", real)
		}
	}
	return real, path, nil
}

// projectFile is the config that discovery finds for dir within its
// project (fence.jsonc, else fence.json, nearest first, up to the git top
// level), or a new fence.jsonc at the project root.
//
// A config further up, outside the project, applies here today; a new
// file would shadow it (discovery stops at the first it finds) and drop
// its rules, so fence refuses and names it instead.
func projectFile(dir string) (string, error) {
	root := policy.WorkspaceRoot(dir)
	for d := dir; ; d = filepath.Dir(d) {
		for _, name := range []string{"fence.jsonc", "fence.json"} {
			found := filepath.Join(d, name)
			if _, err := os.Lstat(found); err != nil {
				continue
			}
			if under(d, root) {
				return found, nil
			}
			return "", fmt.Errorf("%s applies here, from above the project %s; a new fence.jsonc in the project would replace it and drop its rules: edit it with --file %s, or start a project file with fence config init", found, root, found)
		}
		if d == filepath.Dir(d) {
			return filepath.Join(root, "fence.jsonc"), nil
		}
	}
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// newProjectFile is the start of a project file: it extends the user
// config when there is one, else the code template.
func newProjectFile(opts policy.Options) []byte {
	base := "code"
	for _, p := range append(opts.UserConfigPaths(), opts.LegacyUserConfigPaths()...) {
		if _, err := os.Stat(p); err == nil {
			base = "@base"
		}
	}
	return fmt.Appendf(nil, "// fence policy for this project; see what it resolves to with: fence config show\n{\n  \"extends\": %q\n}\n", base)
}

// stillDenied refuses path grants that would change nothing, because a
// deny rule or a mandatory protection beats them: the user would believe
// the path open when it is not.
func stillDenied(opts policy.Options, e *configEdit, discovered string, added []grant) error {
	after := loadedEdit(opts, e, discovered)
	if after.err != nil {
		return fmt.Errorf("%s would not load after the change, so nothing was written: %w", e.path, after.err)
	}
	pol := after.pol
	for _, g := range added {
		if g.access == "" || g.path == "" || !g.allows() {
			continue
		}
		if d := pol.CheckPath(g.access, g.value, g.path); !d.Allowed {
			pattern := ""
			if d.Pattern != nil {
				pattern = fmt.Sprintf(" %q", *d.Pattern)
			}
			return fmt.Errorf("nothing was written: %s %s would still be denied by %s%s (%s), which no allow rule lifts", g.access, g.path, d.Rule, pattern, cmp.Or(d.Source, "fence"))
		}
	}
	return nil
}

// overlayFS reads paths (the names of one file) from memory and
// everything else from disk.
type overlayFS struct {
	paths []string
	data  []byte
}

func (o overlayFS) ReadFile(path string) ([]byte, error) {
	if path != "" && slices.Contains(o.paths, path) {
		return o.data, nil
	}
	return policy.OSFS{}.ReadFile(path)
}
