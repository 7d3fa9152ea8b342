package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
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
	f.StringVarP(&o.output, "output", "o", "", "write the config to this file, and trust it, instead of printing it")
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
	imp := importClaude(perms, claudeProjectRoot(abs))
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
// records it as trusted: fence wrote it, from rules the user chose.
func (o *importOptions) write(opts policy.Options, text []byte, stderr io.Writer) error {
	target, err := filepath.Abs(o.output)
	if err != nil {
		return fmt.Errorf("find %q: %w", o.output, err)
	}
	if err := writeAtomic(target, text, o.force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fence: wrote %s; see what it resolves to with: fence config show -s %s\n", target, shellQuote(target))
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

// translation is a rule's config key and value, or why it has none.
type translation struct {
	key, value string
	widened    string // set when the fence rule refuses more than the source
	why        string
}

// translateClaude turns one Claude Code rule from list into a fence entry.
func translateClaude(list, rule, root string) translation {
	if list == "ask" {
		return translation{why: "fence has no ask: a command runs or is refused, and nobody is asked"}
	}
	tool, spec, hasSpec := splitClaudeRule(rule)
	switch tool {
	case "Bash":
		return translateBash(list, spec, hasSpec)
	case "Read", "Edit":
		return translatePath(list, tool, spec, hasSpec, root)
	case "WebFetch":
		return translateFetch(list, spec, hasSpec)
	case "Write", "MultiEdit", "NotebookEdit":
		return translation{why: "Claude Code applies file path rules through Edit(...), not " + tool + "(...)"}
	case "":
		return translation{why: "not a Claude Code rule (want Tool or Tool(specifier))"}
	}
	return translation{why: fmt.Sprintf("fence has no rule for Claude Code's %s tool", tool)}
}

// splitClaudeRule splits "Tool(specifier)" into its parts; tool is empty
// when rule has neither form.
func splitClaudeRule(rule string) (tool, spec string, hasSpec bool) {
	rule = strings.TrimSpace(rule)
	name, rest, found := strings.Cut(rule, "(")
	if found && !strings.HasSuffix(rest, ")") {
		return "", "", false
	}
	if !validToolName(name) {
		return "", "", false
	}
	if !found {
		return name, "", false
	}
	return name, strings.TrimSpace(strings.TrimSuffix(rest, ")")), true
}

func validToolName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// translateBash turns a Bash rule into a command.deny token prefix.
// Allow rules are not translated: fence runs every command no deny rule
// names, and its command.allow is an exception to deny rules, which a
// Claude Code allow rule never is (there, a deny always wins).
func translateBash(list, spec string, hasSpec bool) translation {
	if list == "allow" {
		return translation{why: "fence runs every command no deny rule names; command.allow would make an exception to deny rules, which a Claude Code allow rule never does"}
	}
	if !hasSpec || spec == "*" || spec == "" || spec == ":*" {
		return translation{why: "refuses every command: fence has no rule for that (leave fence out of this agent's shell instead)"}
	}
	prefix, exact := spec, true
	switch {
	case strings.HasSuffix(spec, ":*"):
		prefix, exact = strings.TrimSuffix(spec, ":*"), false
	case strings.HasSuffix(spec, " *"):
		prefix, exact = strings.TrimSuffix(spec, " *"), false
	}
	if strings.ContainsAny(prefix, "|&;<>()$`\"'\\\n{}") {
		return translation{why: "holds shell syntax or quoting; fence command rules are plain words"}
	}
	words := strings.Fields(prefix)
	if len(words) == 0 {
		return translation{why: "names no command"}
	}
	for _, w := range words[1:] {
		if strings.ContainsAny(w, "*?[") {
			return translation{why: "a wildcard after the command's name has no fence form: only a rule's first word may be a glob"}
		}
	}
	if strings.ContainsAny(words[0], "*?[") && len(words) > 1 {
		return translation{why: "a glob command name followed by more words has no fence form"}
	}
	t := translation{key: "command.deny", value: strings.Join(words, " ")}
	switch {
	case exact && !strings.ContainsAny(prefix, "*?["):
		t.widened = fmt.Sprintf("fence rules are prefixes: command.deny %q also refuses the command with more arguments", t.value)
	case hasOption(words[1:]):
		t.widened = fmt.Sprintf("an option in a fence rule may stand anywhere after the command's name: command.deny %q refuses more than the prefix", t.value)
	}
	return t
}

// hasOption reports whether words hold an option or a word ending in "=",
// which a fence rule matches anywhere after the command's name.
func hasOption(words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "-") || strings.HasSuffix(w, "=") {
			return true
		}
	}
	return false
}

// translatePath turns a Read or Edit rule into a filesystem rule.
func translatePath(list, tool, spec string, hasSpec bool, root string) translation {
	if !hasSpec || spec == "" {
		return translation{why: "names every file: fence has no rule for that"}
	}
	if strings.HasPrefix(spec, "!") {
		return translation{why: "a negated pattern has no fence form"}
	}
	p, why := claudePathPattern(spec, root)
	if why != "" {
		return translation{why: why}
	}
	key := map[string]string{
		"allow Read": "filesystem.allowRead", "deny Read": "filesystem.denyRead",
		"allow Edit": "filesystem.allowWrite", "deny Edit": "filesystem.denyWrite",
	}[list+" "+tool]
	return translation{key: key, value: p}
}

// claudePathPattern turns a Claude Code path pattern (gitignore style)
// into a fence one: "//abs" is absolute, "~/" the home, "/path" relative
// to root, "./path" and "a/b" to the working directory, and a pattern
// without a slash matches at any depth below it, as in .gitignore.
func claudePathPattern(p, root string) (string, string) {
	if strings.HasPrefix(p, "//") {
		return path.Clean("/" + strings.TrimLeft(p, "/")), ""
	}
	// A rule on a directory covers its tree, in fence too.
	p = strings.TrimSuffix(p, "/")
	var out string
	switch {
	case p == "":
		out = filepath.ToSlash(root) // "/" is the project itself
	case p == ".":
		out = "."
	case p == "~" || strings.HasPrefix(p, "~/"):
		out = p
	case strings.HasPrefix(p, "~"):
		return "", "a ~user path has no fence form"
	case strings.HasPrefix(p, "/"):
		out = path.Join(filepath.ToSlash(root), p)
	case strings.HasPrefix(p, "./"):
		out = path.Clean(p)
	case !strings.Contains(p, "/") && p != "**":
		out = "**/" + p
	default:
		out = path.Clean(p)
	}
	return out, ""
}

// translateFetch turns a WebFetch rule into a network domain rule.
func translateFetch(list, spec string, hasSpec bool) translation {
	key := "network.allowedDomains"
	if list == "deny" {
		key = "network.deniedDomains"
	}
	if !hasSpec {
		if list == "deny" {
			return translation{key: key, value: "*", widened: "network.deniedDomains \"*\" keeps every command in the sandbox off the network, not only the fetch tool"}
		}
		return translation{why: "lets the fetch tool reach any domain; the fence form, network.allowedDomains \"*\", would let every command reach any domain, so write it yourself if you mean it"}
	}
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok || strings.TrimSpace(d) == "" {
		return translation{why: "fence translates WebFetch(domain:NAME) only"}
	}
	return translation{key: key, value: strings.TrimSpace(d)}
}

// render writes the imported config as JSONC: a header naming file, then
// every key with one entry a line, each followed by the rule it came from.
func (imp *imported) render(file string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Imported by \"fence import --claude\" from the permission rules in\n// %s.\n", file)
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
