package cmd

import "github.com/tailscale/hujson"

func init() {
	hooksAgents["cursor"] = hooksAgent{"cursor", []string{".cursor", "hooks.json"}, installCursorHook, uninstallCursorHook,
		"fence's beforeShellExecution and beforeReadFile hooks", "Cursor: beforeShellExecution and beforeReadFile hooks in ~/.cursor/hooks.json"}
}

// cursorHookEvents are the Cursor hook events fence's entry answers, in
// the order install adds them.
var cursorHookEvents = []string{"beforeShellExecution", "beforeReadFile"}

// cursorHook is one entry of a Cursor hooks.json event list.
type cursorHook struct {
	Command string `json:"command"`
}

// installCursorHook returns src, a Cursor hooks.json, with fence's entry
// running command under each of cursorHookEvents and no other entry of
// fence's (an older or upstream one is replaced), and the file's version
// set when it has none. src comes back unchanged when it holds exactly
// that already.
func installCursorHook(file string, src []byte, command, self string) ([]byte, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	hooks, err := d.hooksObject()
	if err != nil {
		return nil, err
	}
	for _, ev := range cursorHookEvents {
		if _, _, err := d.hookList(ev); err != nil {
			return nil, err
		}
	}
	version, err := d.field(d.top, "version")
	if err != nil {
		return nil, err
	}
	if version >= 0 && cursorHoldsOnly(hooks, command, self) {
		return src, nil
	}
	d.removeCursorHooks(self)
	if version < 0 {
		d.addVersion()
	}
	for _, ev := range cursorHookEvents {
		d.addHookEntry(ev, cursorHook{Command: command})
	}
	return d.root.Pack(), nil
}

// uninstallCursorHook returns src without fence's Cursor hooks, and how
// many it removed.
func uninstallCursorHook(file string, src []byte, self string) ([]byte, int, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, 0, err
	}
	if _, err := d.hooksObject(); err != nil {
		return nil, 0, err
	}
	n := d.removeCursorHooks(self)
	if n == 0 {
		return src, 0, nil
	}
	return d.root.Pack(), n, nil
}

// addVersion adds "version": 1, which Cursor wants, as the file's last
// member.
func (d *settingsDoc) addVersion() {
	indent := indentOf(memberBefores(d.top), d.unit)
	appendMember(d.top, "version", "1", indent, "", opensUp(d.top.AfterExtra, len(d.top.Members)))
}

// cursorHoldsOnly reports whether fence's entries in hooks are exactly
// one running command under each of cursorHookEvents, each holding
// command alone as fence writes it (a matcher, a timeout or any other
// key changes what Cursor does with it).
func cursorHoldsOnly(hooks *hujson.Object, command, self string) bool {
	if hooks == nil {
		return false
	}
	want := map[string]bool{}
	for _, ev := range cursorHookEvents {
		want[ev] = true
	}
	found := 0
	for _, m := range hooks.Members {
		lit, _ := m.Name.Value.(hujson.Literal)
		arr, _ := m.Value.Value.(*hujson.Array)
		if arr == nil {
			continue
		}
		for _, h := range arr.Elements {
			c, ok := cursorCommandOf(h)
			if !ok || !isFenceCursorHook(c, self) {
				continue
			}
			if !onlyKeys(asObject(h), "command") || c != command || !want[lit.String()] {
				return false
			}
			found++
			delete(want, lit.String())
		}
	}
	return found == len(cursorHookEvents) && len(want) == 0
}

// removeCursorHooks takes fence's entries out of every event list of
// hooks; a list, and the hooks object, go too when fence's entries were
// all they held. It returns how many it took out.
func (d *settingsDoc) removeCursorHooks(self string) int {
	hooks, _ := d.hooksObject()
	if hooks == nil {
		return 0
	}
	n := 0
	for mi := len(hooks.Members) - 1; mi >= 0; mi-- {
		arr, _ := hooks.Members[mi].Value.Value.(*hujson.Array)
		if arr == nil {
			continue
		}
		removed := 0
		for hi := len(arr.Elements) - 1; hi >= 0; hi-- {
			if c, ok := cursorCommandOf(arr.Elements[hi]); ok && isFenceCursorHook(c, self) {
				removeElement(arr, hi)
				removed++
			}
		}
		n += removed
		if removed > 0 && len(arr.Elements) == 0 {
			removeMember(hooks, mi)
		}
	}
	if n > 0 && len(hooks.Members) == 0 {
		i, _ := d.field(d.top, "hooks")
		removeMember(d.top, i)
	}
	return n
}

// cursorCommandOf is the command of a Cursor hook entry: a command hook,
// its type given as "command" or not at all.
func cursorCommandOf(h hujson.Value) (string, bool) {
	obj, _ := h.Value.(*hujson.Object)
	if obj == nil {
		return "", false
	}
	if i := memberIndex(obj, "type"); i >= 0 && stringField(obj, "type") != "command" {
		return "", false
	}
	c := stringField(obj, "command")
	return c, c != ""
}

// memberIndex is the index of obj's member name, or -1.
func memberIndex(obj *hujson.Object, name string) int {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// isFenceCursorHook reports whether command runs a fence binary's
// Cursor hook and nothing else (see isFenceHookWords).
func isFenceCursorHook(command, self string) bool {
	words, ok := literalWords(command)
	return ok && isFenceHookWords(words, self, "cursor")
}
