package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/fence-sandbox/fence/policy"
)

type importOptions struct {
	policy *policyFlags
	claude bool
	file   string
	output string
	force  bool
}

func newImportCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	o := &importOptions{policy: pf}
	c := &cobra.Command{
		Use:   "import --claude [--file settings.json] [-o fence.jsonc]",
		Short: "Turn Claude Code's permission rules into a fence.jsonc, listing the rules that have no fence form",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return o.run(stdout, stderr) },
	}
	f := c.Flags()
	f.BoolVar(&o.claude, "claude", false, "import Claude Code's permissions.allow and permissions.deny rules")
	f.StringVar(&o.file, "file", "", "the settings file to read (default ~/.claude/settings.json)")
	f.StringVarP(&o.output, "output", "o", "", "write the config to this file instead of printing it (trusted when made from your own settings)")
	f.BoolVar(&o.force, "force", false, "with -o, replace an existing file")
	return c
}

func (o *importOptions) run(stdout, stderr io.Writer) error {
	if !o.claude {
		return errors.New("say whose settings to import: --claude")
	}
	if o.policy.settings != "" || o.policy.template != "" || !o.policy.rules.IsZero() {
		return errors.New("policy flags do not apply to import: use --file to choose what to read and -o where to write, then edit what it wrote")
	}
	file, err := o.settingsFile()
	if err != nil {
		return err
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read Claude Code settings: %w", err)
	}
	perms, err := parseClaudePermissions(file, src)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("find %q: %w", file, err)
	}
	opts, err := o.policy.options()
	if err != nil {
		return err
	}
	root := claudeProjectRoot(abs)
	if root == filepath.Clean(opts.Home) {
		// The user's settings: Claude Code anchors "/path" at the project
		// it runs in, which for fence is the run's working directory.
		root = ""
	}
	imp := importClaude(perms, root)
	text := imp.render(file)
	res, err := loadImported(text, opts.Dir, opts.Home)
	if err != nil {
		return fmt.Errorf("BUG: the imported config does not load: %w", err)
	}
	imp.report(stderr, file)
	for _, w := range policy.Lint(res, opts.Dir, opts.Home, policy.PathDirs(os.Getenv("PATH"))...) {
		w.Where = "" // the imported config has no file yet; key and value name the entry
		fmt.Fprintf(stderr, "fence: warning: %s [%s]\n", w, w.Check)
	}
	if o.output == "" {
		_, err := stdout.Write(text)
		return err
	}
	return o.write(opts, text, stderr)
}

// settingsFile is --file, or Claude Code's user settings.
func (o *importOptions) settingsFile() (string, error) {
	if o.file != "" {
		return o.file, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory: %w", err)
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// write puts text at -o, refusing to replace a file without --force, and
// records it as trusted when it comes from the user's own Claude Code
// settings: fence wrote it, from rules the user chose. Rules from another
// file (a project's .claude/settings.json, which a sandboxed command may
// have written) are not vouched for: the user reads them and trusts the
// result with fence config trust.
func (o *importOptions) write(opts policy.Options, text []byte, stderr io.Writer) error {
	target, err := filepath.Abs(o.output)
	if err != nil {
		return fmt.Errorf("find %q: %w", o.output, err)
	}
	if err := writeAtomic(target, text, o.force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: wrote %s; see what it resolves to with: fence config show -s %s\n", target, shellQuote(target))
	if o.file != "" {
		fmt.Fprintf(stderr, "fence: not trusted: its rules come from %s, which a sandboxed command may have written; read it, then: fence config trust %s\n", o.file, shellQuote(target))
		return nil
	}
	return recordTrust(opts, stderr, text, target)
}

// claudePermissions are the rule lists of a Claude Code settings file.
type claudePermissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
	Ask   []string `json:"ask"`
	// AdditionalDirectories open more directories to the agent's file
	// tools; they are listed as not imported, since they only allow.
	AdditionalDirectories []string `json:"additionalDirectories"`
}

// parseClaudePermissions reads the permissions of a JSONC settings file;
// an error names file:line:col.
func parseClaudePermissions(file string, src []byte) (claudePermissions, error) {
	var perms claudePermissions
	v, err := hujson.Parse(src)
	if err != nil {
		return perms, jsoncError(file, err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return perms, docError(file, src, &v, "want an object at the top level")
	}
	pv := member(top, "permissions")
	if pv == nil {
		return perms, nil
	}
	obj, ok := pv.Value.(*hujson.Object)
	if !ok {
		return perms, docError(file, src, pv, "permissions: want an object")
	}
	for _, l := range []struct {
		name string
		dst  *[]string
	}{{"allow", &perms.Allow}, {"deny", &perms.Deny}, {"ask", &perms.Ask}, {"additionalDirectories", &perms.AdditionalDirectories}} {
		if lv := member(obj, l.name); lv != nil {
			if *l.dst, err = stringList(file, src, lv, "permissions."+l.name); err != nil {
				return perms, err
			}
		}
	}
	return perms, nil
}

// member is the value of the last member of obj called name, as JSON
// readers take it, or nil.
func member(obj *hujson.Object, name string) *hujson.Value {
	var v *hujson.Value
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			v = &obj.Members[i].Value
		}
	}
	return v
}

// stringList decodes v, which must be a list of strings.
func stringList(file string, src []byte, v *hujson.Value, key string) ([]string, error) {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, docError(file, src, v, key+": want a list of strings")
	}
	out := make([]string, 0, len(arr.Elements))
	for i := range arr.Elements {
		lit, ok := arr.Elements[i].Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' {
			return nil, docError(file, src, &arr.Elements[i], key+": want a string")
		}
		out = append(out, lit.String())
	}
	return out, nil
}

// claudeProjectRoot is what Claude Code's "/path" rules are relative to:
// the project a .claude directory belongs to, else the settings file's
// own directory.
func claudeProjectRoot(file string) string {
	dir := filepath.Dir(file)
	if filepath.Base(dir) == ".claude" {
		return filepath.Dir(dir)
	}
	return dir
}

// importEntry is one value of the imported config and the rule it came from.
type importEntry struct{ value, rule string }

// skipped is a rule with no fence form, and why.
type skipped struct{ list, rule, why string }

// imported is the result of translating a settings file's rules.
type imported struct {
	keys     map[string][]importEntry // "network.allowedDomains" → entries
	skipped  []skipped
	widened  []skipped
	rules    int
	accepted int
}

// importKeys are the config keys import writes, in the order it writes them.
var importKeys = []string{
	"network.allowedDomains", "network.deniedDomains",
	"filesystem.allowRead", "filesystem.denyRead", "filesystem.allowWrite", "filesystem.denyWrite",
	"command.deny",
}

// importClaude translates every rule of perms; root anchors "/path" rules.
func importClaude(perms claudePermissions, root string) *imported {
	imp := &imported{keys: map[string][]importEntry{}}
	for _, l := range []struct {
		name  string
		rules []string
	}{{"allow", perms.Allow}, {"deny", perms.Deny}, {"ask", perms.Ask}} {
		for _, rule := range l.rules {
			imp.rules++
			imp.add(l.name, rule, root)
		}
	}
	for _, d := range perms.AdditionalDirectories {
		imp.rules++
		imp.skipped = append(imp.skipped, skipped{"additionalDirectories", d, "opens a directory to the agent's file tools; give the sandbox what it needs there with filesystem.allowWrite yourself"})
	}
	return imp
}

// add translates one rule, checking its entry with the policy loader.
func (imp *imported) add(list, rule, root string) {
	t := translateClaude(list, rule, root)
	if t.why != "" {
		imp.skipped = append(imp.skipped, skipped{list, rule, t.why})
		return
	}
	if err := validateEntry(t.key, t.value); err != nil {
		imp.skipped = append(imp.skipped, skipped{list, rule, fmt.Sprintf("%s %q does not load: %v", t.key, t.value, err)})
		return
	}
	imp.accepted++
	for _, e := range imp.keys[t.key] {
		if e.value == t.value {
			return
		}
	}
	imp.keys[t.key] = append(imp.keys[t.key], importEntry{t.value, rule})
	if t.widened != "" {
		imp.widened = append(imp.widened, skipped{list, rule, t.widened})
	}
}

// render writes the imported config as JSONC: a header naming file, then
// every key with one entry a line, each followed by the rule it came from.
func (imp *imported) render(file string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Imported by \"fence import --claude\" from the permission rules in\n// %s.\n", oneLine(file))
	b.WriteString("// Each entry names the Claude Code rule it came from. Review what this\n")
	b.WriteString("// resolves to with: fence config show\n")
	if len(imp.skipped) > 0 {
		b.WriteString("//\n// Not imported:\n")
		for _, s := range imp.skipped {
			fmt.Fprintf(&b, "//   %s %s: %s\n", s.list, oneLine(s.rule), s.why)
		}
	}
	sections := map[string][]string{}
	var order []string
	for _, k := range importKeys {
		if len(imp.keys[k]) == 0 {
			continue
		}
		sec, _, _ := strings.Cut(k, ".")
		if sections[sec] == nil {
			order = append(order, sec)
		}
		sections[sec] = append(sections[sec], k)
	}
	if len(order) == 0 {
		b.WriteString("{}\n")
		return b.Bytes()
	}
	b.WriteString("{\n")
	for si, sec := range order {
		fmt.Fprintf(&b, "  %s: {\n", jsonString(sec))
		for ki, k := range sections[sec] {
			_, name, _ := strings.Cut(k, ".")
			fmt.Fprintf(&b, "    %s: [\n", jsonString(name))
			entries := imp.keys[k]
			for i, e := range entries {
				fmt.Fprintf(&b, "      %s%s // %s\n", jsonString(e.value), comma(i, len(entries)), oneLine(e.rule))
			}
			fmt.Fprintf(&b, "    ]%s\n", comma(ki, len(sections[sec])))
		}
		fmt.Fprintf(&b, "  }%s\n", comma(si, len(order)))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// oneLine keeps a rule quoted in a comment on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// report lists on stderr every rule that was not translated, and every
// one that fence enforces more widely than the source did.
func (imp *imported) report(stderr io.Writer, file string) {
	for _, s := range imp.skipped {
		fmt.Fprintf(stderr, "fence: not imported: %s %q: %s\n", s.list, s.rule, s.why)
	}
	for _, s := range imp.widened {
		fmt.Fprintf(stderr, "fence: warning: %s %q: %s\n", s.list, s.rule, s.why)
	}
	fmt.Fprintf(stderr, "fence: imported %d of %d rules from %s\n", imp.accepted, imp.rules, file)
}

// memFS is a config tree held in memory, for checking what import writes
// with the policy loader before anything sees it.
type memFS map[string][]byte

func (m memFS) ReadFile(p string) ([]byte, error) {
	if b, ok := m[p]; ok {
		return b, nil
	}
	return nil, fs.ErrNotExist
}

// loadImported loads text as fence would load it as a fence.jsonc in
// dir, without writing it anywhere.
func loadImported(text []byte, dir, home string) (*policy.Resolved, error) {
	file := filepath.Join(dir, "fence-import.jsonc")
	return policy.Load(policy.Options{
		Settings: file, Dir: dir, Home: home,
		UserConfigDir: filepath.Join(home, ".config", "fence"), FS: memFS{file: text},
	})
}

// validateEntry loads a config holding the single entry key: value.
func validateEntry(key, value string) error {
	imp := &imported{keys: map[string][]importEntry{key: {{value, ""}}}}
	_, err := loadImported(imp.render("entry"), "/import", "/home/import")
	var fe *policy.FileError
	if errors.As(err, &fe) {
		return errors.New(fe.Msg)
	}
	return err
}
