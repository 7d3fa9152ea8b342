package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tailscale/hujson"
)

// geminiMatcher is the BeforeTool matcher of fence's Gemini CLI hook:
// exactly the tools fence judges (geminiJudged). Gemini reads a tool
// matcher as an unanchored regular expression, so it is anchored here:
// an MCP tool whose name holds read_file is not sent to fence.
const geminiMatcher = "^(run_shell_command|read_file|read_many_files|write_file|replace|list_directory|glob|grep_search|search_file_content|web_fetch)$"

// geminiHookName is the name of fence's hook entry, by which Gemini's
// /hooks panel and hooksConfig.disabled know it.
const geminiHookName = "fence"

func init() {
	hooksNotes["gemini"] = []string{
		"Gemini CLI releases before 0.27 run hooks only with tools.enableHooks set to true",
		"a project's .gemini/settings.json counts only in a folder Gemini CLI trusts",
	}
	hooksOff["gemini"] = geminiHooksOff
	hooksAgents["gemini"] = hooksAgent{"gemini", []string{".gemini", "settings.json"}, installGeminiHook, uninstallGeminiHook,
		"fence's BeforeTool hook \"" + geminiHookName + "\" for " + geminiMatcher,
		"Gemini CLI: a BeforeTool hook in ~/.gemini/settings.json"}
}

// geminiGroup is one matcher group of Gemini CLI's hooks, in the order
// its keys are written.
type geminiGroup struct {
	Matcher string       `json:"matcher"`
	Hooks   []geminiHook `json:"hooks"`
}

type geminiHook struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Command string `json:"command"`
}

// installGeminiHook returns src, a Gemini CLI settings.json, with fence's
// BeforeTool group running command and no other hook of fence's (an
// older or upstream one is replaced). src comes back unchanged when it
// holds exactly that already.
func installGeminiHook(file string, src []byte, command, self string) ([]byte, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	_, before, err := d.hookList("BeforeTool")
	if err != nil {
		return nil, err
	}
	if err := d.geminiConfigChecked(); err != nil {
		return nil, err
	}
	if before != nil && geminiHoldsOnly(d, before, command, self) {
		return src, nil
	}
	d.removeGeminiHooks(self)
	d.addHookEntry("BeforeTool", geminiGroup{Matcher: geminiMatcher, Hooks: []geminiHook{{Name: geminiHookName, Type: "command", Command: command}}})
	return d.root.Pack(), nil
}

// uninstallGeminiHook returns src without fence's Gemini CLI hooks, and
// how many it removed.
func uninstallGeminiHook(file string, src []byte, self string) ([]byte, int, error) {
	d, err := parseSettings(file, src)
	if err != nil {
		return nil, 0, err
	}
	if _, _, err := d.hookList("BeforeTool"); err != nil {
		return nil, 0, err // a file Gemini cannot read either
	}
	if err := d.geminiConfigChecked(); err != nil {
		return nil, 0, err
	}
	n := d.removeGeminiHooks(self)
	if n == 0 {
		return src, 0, nil
	}
	if len(d.top.Members) == 0 && len(bytes.TrimSpace(d.top.AfterExtra)) == 0 {
		d.top.AfterExtra = nil // `{}` as it was before install
	}
	return d.root.Pack(), n, nil
}

// geminiHoldsOnly reports whether fence's one hook in the settings is
// command, named fence, alone in a BeforeTool group of fence's matcher,
// hook and group holding no key fence does not write (a timeout or a
// second matcher changes what Gemini does with it).
func geminiHoldsOnly(d *settingsDoc, before *hujson.Array, command, self string) bool {
	found, exact := 0, false
	d.eachGeminiHook(self, func(list string, group, hook *hujson.Object) {
		found++
		exact = list == "BeforeTool" && onlyKeys(hook, "name", "type", "command") && stringField(hook, "command") == command &&
			stringField(hook, "name") == geminiHookName && onlyKeys(group, "matcher", "hooks") &&
			stringField(group, "matcher") == geminiMatcher && len(groupHooks(group)) == 1
	})
	return found == 1 && exact && before != nil
}

// eachGeminiHook calls f for each hook of fence's in any event list of
// the settings' hooks object, with the list's name and the group it is
// in. Members of hooks that are no event list (enabled, disabled in
// older releases) are passed over.
func (d *settingsDoc) eachGeminiHook(self string, f func(list string, group, hook *hujson.Object)) {
	hooks, _ := d.hooksObject()
	if hooks == nil {
		return
	}
	for _, m := range hooks.Members {
		lit, _ := m.Name.Value.(hujson.Literal)
		arr, _ := m.Value.Value.(*hujson.Array)
		if arr == nil {
			continue
		}
		for _, g := range arr.Elements {
			group, _ := g.Value.(*hujson.Object)
			for _, h := range groupHooks(group) {
				if c, ok := hookCommandOf(h); ok && isFenceGeminiHook(c, self) {
					f(lit.String(), group, h.Value.(*hujson.Object))
				}
			}
		}
	}
}

// removeGeminiHooks takes fence's hooks out of every event list; a
// group, a list and the hooks object go too when fence's hooks were all
// they held. It returns how many it took out.
func (d *settingsDoc) removeGeminiHooks(self string) int {
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
		emptied := 0
		for gi := len(arr.Elements) - 1; gi >= 0; gi-- {
			group, _ := arr.Elements[gi].Value.(*hujson.Object)
			inner := groupHookArray(group)
			if inner == nil {
				continue
			}
			removed := 0
			for hi := len(inner.Elements) - 1; hi >= 0; hi-- {
				if c, ok := hookCommandOf(inner.Elements[hi]); ok && isFenceGeminiHook(c, self) {
					removeElement(inner, hi)
					removed++
				}
			}
			n += removed
			if removed > 0 && len(inner.Elements) == 0 {
				removeElement(arr, gi)
				emptied++
			}
		}
		if emptied > 0 && len(arr.Elements) == 0 {
			removeMember(hooks, mi)
		}
	}
	if n > 0 && len(hooks.Members) == 0 {
		i, _ := d.field(d.top, "hooks")
		removeMember(d.top, i)
	}
	return n
}

// isFenceGeminiHook reports whether command runs a fence binary's
// Gemini CLI hook and nothing else (see isFenceHookWords).
func isFenceGeminiHook(command, self string) bool {
	words, ok := literalWords(command)
	return ok && isFenceHookWords(words, self, "gemini")
}

// geminiConfigChecked refuses a hooksConfig that names a key twice:
// fence reads it to warn when Gemini would not run its hook, and would
// read another value than Gemini (whose reader takes the last).
func (d *settingsDoc) geminiConfigChecked() error {
	i, err := d.field(d.top, "hooksConfig")
	if err != nil || i < 0 {
		return err
	}
	return d.noDuplicates(&d.top.Members[i].Value)
}

// geminiHooksOff says why Gemini CLI would not run fence's hook from
// settings src: hooks turned off, or fence's named among the disabled
// ones (hooksConfig, or hooks in older releases), by its name or by a
// command of fence's hook (Gemini's documentation does not say which of
// the two it matches: both are warned of); "" when it would.
func geminiHooksOff(src []byte) string {
	var s struct {
		HooksConfig struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooksConfig"`
		Hooks struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooks"`
	}
	std, err := hujson.Standardize(slices.Clone(src))
	if err != nil || json.Unmarshal(std, &s) != nil {
		return "" // a file it cannot read is refused before this
	}
	switch {
	case s.HooksConfig.Enabled != nil && !*s.HooksConfig.Enabled, s.Hooks.Enabled != nil && !*s.Hooks.Enabled:
		return "it sets hooks' enabled to false, so Gemini CLI runs no hook, fence's included"
	}
	for _, off := range append(s.HooksConfig.Disabled, s.Hooks.Disabled...) {
		if off == geminiHookName || isFenceGeminiHook(off, "") {
			return fmt.Sprintf("it lists %q among the disabled hooks, so Gemini CLI does not run fence's", off)
		}
	}
	return ""
}
