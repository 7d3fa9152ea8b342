package cmd

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// claudeJSONKeys are the keys of ~/.claude.json that make the next Claude
// Code run code, approve tools or trust a directory, as Claude Code's
// documentation describes the file (its MCP page: user and local scope
// servers, the approval of a project's .mcp.json servers and workspace
// trust; its settings page: the global config and per-project state it
// keeps there). "*" is any project path. Claude Code rewrites the rest of
// the file constantly (start counts, tips, caches, sizes), and that stays
// the command's to change.
var claudeJSONKeys = [][]string{
	{"mcpServers"},                    // user scope servers: started with every session
	{"apiKeyHelper"},                  // a script older versions ran for the API key
	{"allowedTools"},                  // tools approved without asking (older global config)
	{"customApiKeyResponses"},         // which API keys from the environment are approved
	{"bypassPermissionsModeAccepted"}, // the warning of --dangerously-skip-permissions accepted
	{"projects", "*", "mcpServers"},   // local scope servers of that directory
	{"projects", "*", "enabledMcpjsonServers"},
	{"projects", "*", "disabledMcpjsonServers"}, // removing one enables the server
	{"projects", "*", "enableAllProjectMcpServers"},
	{"projects", "*", "hasTrustDialogAccepted"}, // the directory (and those below) trusted
	{"projects", "*", "allowedTools"},
	{"projects", "*", "hasClaudeMdExternalIncludesApproved"}, // CLAUDE.md may import files outside the project
}

// keyChange is a guarded key path whose value a run changed.
type keyChange struct {
	Path string // as `projects["/w"].mcpServers`
	Why  string // added, changed, removed
}

func (c keyChange) String() string { return c.Path + " (" + c.Why + ")" }

// guardedValue is the value at one concrete guarded key path.
type guardedValue struct {
	path  []string
	value hujson.Value
}

// equal reports whether g and o hold the same JSON value, whatever the
// spacing.
func (g guardedValue) equal(o guardedValue) bool {
	a, b := packTrimmed(g.value), packTrimmed(o.value)
	return bytes.Equal(a, b) || reflect.DeepEqual(decodePlain(a), decodePlain(b))
}

// packTrimmed is v's text without the space around it.
func packTrimmed(v hujson.Value) []byte {
	v.BeforeExtra, v.AfterExtra = nil, nil
	return v.Pack()
}

// configDoc is a config file's content, parsed when it is one JSON object.
type configDoc struct {
	raw    []byte
	root   *hujson.Value // nil: not a JSON object
	values map[string]guardedValue
	dup    string // a key path named twice in an object on the way to a guarded key
}

// parseConfigDoc parses raw as strict JSON (what Claude Code's parser
// takes) and collects the guarded values keys name. Content that is not
// one JSON object has no root and no values.
func parseConfigDoc(raw []byte, keys [][]string) *configDoc {
	d := &configDoc{raw: raw, values: map[string]guardedValue{}}
	if !json.Valid(raw) {
		return d
	}
	v, err := hujson.Parse(raw)
	if err != nil {
		return d
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return d
	}
	d.root = &v
	d.collect(d.root, newKeyTree(keys), nil)
	return d
}

// keyTree is key paths as a tree, to walk each object once.
type keyTree struct {
	leaf bool
	kids map[string]*keyTree // by name, "*" for any
}

func newKeyTree(keys [][]string) *keyTree {
	root := &keyTree{}
	for _, k := range keys {
		n := root
		for _, name := range k {
			if n.kids == nil {
				n.kids = map[string]*keyTree{}
			}
			if n.kids[name] == nil {
				n.kids[name] = &keyTree{}
			}
			n = n.kids[name]
		}
		n.leaf = true
	}
	return root
}

// collect adds the values below v that tree names, whose key path is at.
// Names repeat in an object: the last one counts, as for JSON.parse, and
// dup records where.
func (d *configDoc) collect(v *hujson.Value, tree *keyTree, at []string) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return
	}
	last := lastMembers(obj)
	if len(last) != len(obj.Members) && d.dup == "" {
		d.dup = keyPathString(at)
	}
	for _, i := range memberOrder(obj, last) {
		name := memberName(obj.Members[i])
		for _, kid := range []*keyTree{tree.kids[name], tree.kids["*"]} {
			if kid == nil {
				continue
			}
			p := append(append([]string(nil), at...), name)
			if kid.leaf {
				val := obj.Members[i].Value
				d.values[keyPathString(p)] = guardedValue{path: p, value: val}
			}
			if len(kid.kids) > 0 {
				d.collect(&obj.Members[i].Value, kid, p)
			}
		}
	}
}

// lastMembers maps each member name of obj to the index of its last
// occurrence.
func lastMembers(obj *hujson.Object) map[string]int {
	last := map[string]int{}
	for i, m := range obj.Members {
		last[memberName(m)] = i
	}
	return last
}

// memberOrder is the indexes of last, in the order of obj.
func memberOrder(obj *hujson.Object, last map[string]int) []int {
	var out []int
	for i, m := range obj.Members {
		if last[memberName(m)] == i {
			out = append(out, i)
		}
	}
	return out
}

// memberName is m's name, decoded.
func memberName(m hujson.ObjectMember) string {
	lit, ok := m.Name.Value.(hujson.Literal)
	if !ok {
		return ""
	}
	if n := len(lit); n >= 2 && lit[0] == '"' && lit[n-1] == '"' && !bytes.ContainsRune(lit[1:n-1], '\\') {
		return string(lit[1 : n-1]) // no escapes: the common case, without a decoder
	}
	return lit.String()
}

// decodePlain is b as encoding/json decodes it, numbers kept exact.
func decodePlain(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}

// keyPathString names a key path: plain names joined with dots, others
// (project paths) quoted in brackets.
func keyPathString(p []string) string {
	var b strings.Builder
	for _, name := range p {
		if plainKey(name) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
			continue
		}
		b.WriteString("[" + strconv.Quote(name) + "]")
	}
	if b.Len() == 0 {
		return "(the top level)"
	}
	return b.String()
}

func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// guardedChanges lists the guarded key paths whose value differs between
// before and after, in a stable order.
func guardedChanges(before, after *configDoc) []keyChange {
	var out []keyChange
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		b, inBefore := before.values[p]
		a, inAfter := after.values[p]
		switch {
		case inBefore && !inAfter:
			out = append(out, keyChange{p, "removed"})
		case !inBefore && inAfter:
			out = append(out, keyChange{p, "added"})
		case inBefore && !b.equal(a):
			out = append(out, keyChange{p, "changed"})
		}
	}
	for _, p := range sortedKeys(before.values) {
		add(p)
	}
	for _, p := range sortedKeys(after.values) {
		add(p)
	}
	slices.SortFunc(out, func(a, b keyChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func sortedKeys(m map[string]guardedValue) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// restoredConfig is what a run's edit of a guarded file comes to.
type restoredConfig struct {
	content []byte      // what to write back; nil: nothing to do
	changes []keyChange // the guarded key paths restored
	whole   string      // why the whole content before the run comes back, "" when not
}

// restoreGuarded compares the content after a run with the content
// before it: when no guarded value changed, there is nothing to do; when
// some did, the content after the run with those values as they were
// before; when the content after the run is not one JSON object (or
// names a key twice on the way to a guarded one), the whole content
// before.
func restoreGuarded(keys [][]string, beforeRaw, afterRaw []byte) restoredConfig {
	before := parseConfigDoc(beforeRaw, keys)
	after := parseConfigDoc(afterRaw, keys)
	if bytes.Equal(beforeRaw, afterRaw) {
		return restoredConfig{}
	}
	if after.root == nil {
		return restoredConfig{content: beforeRaw, whole: "the run left it not one JSON object"}
	}
	changes := guardedChanges(before, after)
	if after.dup != "" && after.dup != before.dup {
		// Claude Code never writes a name twice; parsers differ on which
		// one counts.
		return restoredConfig{content: beforeRaw, changes: changes, whole: "the run named a key twice in " + after.dup}
	}
	if len(changes) == 0 {
		return restoredConfig{}
	}
	doc := after.root // after is not needed past here: edited in place
	for _, c := range changes {
		if b, ok := before.values[c.Path]; ok {
			setKeyPath(doc, b.path, b.value, hujson.Extra("\n  "))
		} else {
			deleteKeyPath(doc, after.values[c.Path].path)
		}
	}
	out := doc.Pack()
	if check := parseConfigDoc(out, keys); check.root == nil || len(guardedChanges(before, check)) > 0 {
		return restoredConfig{content: beforeRaw, changes: changes, whole: "fence could not edit the guarded keys back alone"}
	}
	return restoredConfig{content: out, changes: changes}
}

// setKeyPath sets the member at path below v to val, making the objects
// on the way (one that is not an object becomes one). indent is what
// goes before a member's name in an object that has none yet.
func setKeyPath(v *hujson.Value, path []string, val hujson.Value, indent hujson.Extra) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		obj = &hujson.Object{}
		v.Value = obj
	}
	i, ok := lastMembers(obj)[path[0]]
	if !ok {
		if n := len(obj.Members); n > 0 {
			indent = obj.Members[n-1].Name.BeforeExtra
		}
		if len(obj.Members) == 0 {
			obj.AfterExtra = closingIndent(indent)
		}
		obj.Members = append(obj.Members, hujson.ObjectMember{
			Name:  hujson.Value{BeforeExtra: append(hujson.Extra(nil), indent...), Value: hujson.String(path[0])},
			Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: &hujson.Object{}},
		})
		i = len(obj.Members) - 1
	}
	if len(path) > 1 {
		setKeyPath(&obj.Members[i].Value, path[1:], val, deeper(obj.Members[i].Name.BeforeExtra))
		return
	}
	old := obj.Members[i].Value
	val = val.Clone()
	val.BeforeExtra, val.AfterExtra = old.BeforeExtra, old.AfterExtra
	obj.Members[i].Value = val
}

// deeper is indent one level in: two more spaces on a new line, or a
// space where the file is on one line.
func deeper(indent hujson.Extra) hujson.Extra {
	if !bytes.Contains(indent, []byte("\n")) {
		return nil
	}
	return append(append(hujson.Extra(nil), indent...), "  "...)
}

// closingIndent is what goes before the closing brace of an object whose
// members are indented with indent.
func closingIndent(indent hujson.Extra) hujson.Extra {
	if !bytes.HasSuffix(indent, []byte("  ")) || !bytes.Contains(indent, []byte("\n")) {
		return nil
	}
	return append(hujson.Extra(nil), indent[:len(indent)-2]...)
}

// deleteKeyPath removes every member at path below v.
func deleteKeyPath(v *hujson.Value, path []string) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return
	}
	if len(path) > 1 {
		if i, ok := lastMembers(obj)[path[0]]; ok {
			deleteKeyPath(&obj.Members[i].Value, path[1:])
		}
		return
	}
	kept := obj.Members[:0]
	for _, m := range obj.Members {
		if memberName(m) != path[0] {
			kept = append(kept, m)
		}
	}
	obj.Members = kept
}

// changeList is changes, comma-separated.
func changeList(changes []keyChange) string {
	s := make([]string, len(changes))
	for i, c := range changes {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}
