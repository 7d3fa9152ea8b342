package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// addGroup appends g to hooks.PreToolUse (see addHookEntry).
func (d *settingsDoc) addGroup(g claudeGroup) { d.addHookEntry("PreToolUse", g) }

// addHookEntry appends entry to hooks.<list>, making the list and the
// hooks object when they are missing, laid out like what is around it:
// on lines of their own at the indentation of their neighbours in a
// container laid out on several lines (an empty one is opened up), on
// one line in a one-line container.
func (d *settingsDoc) addHookEntry(list string, entry any) {
	hooks, arr, _ := d.hookList(list) // checked by the caller
	topIndent := indentOf(memberBefores(d.top), d.unit)
	if hooks == nil {
		multi := opensUp(d.top.AfterExtra, len(d.top.Members))
		text := render(map[string][]any{list: {entry}}, topIndent, d.unit, multi)
		appendMember(d.top, "hooks", text, topIndent, "", multi)
		return
	}
	hooksIndent := indentOf(memberBefores(hooks), topIndent+d.unit)
	if arr == nil {
		multi := opensUp(hooks.AfterExtra, len(hooks.Members))
		text := render([]any{entry}, hooksIndent, d.unit, multi)
		appendMember(hooks, list, text, hooksIndent, topIndent, multi)
		return
	}
	indent := indentOf(elementBefores(arr), hooksIndent+d.unit)
	multi := opensUp(arr.AfterExtra, len(arr.Elements))
	v := parseGenerated(render(entry, indent, d.unit, multi))
	place(&v.BeforeExtra, &v.AfterExtra, lastOf(arr.Elements), &arr.AfterExtra, multi, indent, hooksIndent)
	arr.Elements = append(arr.Elements, v)
}

// opensUp reports whether a container, given the extra before its
// closing bracket and its length, takes new entries on lines of their
// own: it is laid out on several lines, or empty.
func opensUp(closing hujson.Extra, n int) bool {
	return n == 0 || bytes.ContainsRune(closing, '\n')
}

// render is v as JSON: indented, its lines after the first at indent, or
// on one line.
func render(v any, indent, unit string, multi bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if multi {
		enc.SetIndent(indent, unit)
	}
	if err := enc.Encode(v); err != nil {
		panic("fence: BUG: render hook entry: " + err.Error()) // strings only
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if !multi {
		out = strings.NewReplacer(`":`, `": `, `,"`, `, "`).Replace(out)
	}
	return out
}

func parseGenerated(text string) hujson.Value {
	v, err := hujson.Parse([]byte(text))
	if err != nil {
		panic("fence: BUG: generated JSON does not parse: " + text)
	}
	return v
}

// appendMember adds "name": text as obj's last member.
func appendMember(obj *hujson.Object, name, text, indent, outer string, multi bool) {
	v := parseGenerated(text)
	v.BeforeExtra = hujson.Extra(" ")
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: v}
	var last *hujson.Value
	if n := len(obj.Members); n > 0 {
		last = &obj.Members[n-1].Value
	}
	place(&m.Name.BeforeExtra, &m.Value.AfterExtra, last, &obj.AfterExtra, multi, indent, outer)
	obj.Members = append(obj.Members, m)
}

// place sets the extras of a value appended after last (nil in an empty
// container) in a container whose extra before the closing bracket is
// *closing and whose own line starts at outer. A comment that ended the
// container stays before its bracket; a trailing comma stays.
func place(before, after *hujson.Extra, last *hujson.Value, closing *hujson.Extra, multi bool, indent, outer string) {
	if last != nil && last.AfterExtra != nil {
		*after = hujson.Extra{}
	}
	if !multi {
		if last != nil {
			*before = hujson.Extra(" ")
		}
		return
	}
	nl := bytes.LastIndexByte(*closing, '\n')
	if nl < 0 {
		*before = hujson.Extra(string(*closing) + "\n" + indent)
		*closing = nil
		if last == nil {
			*closing = hujson.Extra("\n" + outer)
		}
		return
	}
	*before = hujson.Extra(string((*closing)[:nl]) + "\n" + indent)
	*closing = (*closing)[nl:]
}

// removeElement takes element i out of arr.
func removeElement(arr *hujson.Array, i int) {
	gone := arr.Elements[i]
	arr.Elements = append(arr.Elements[:i:i], arr.Elements[i+1:]...)
	dropped(gone.BeforeExtra, gone.AfterExtra, i, len(arr.Elements), func(j int) (*hujson.Extra, *hujson.Extra) {
		return &arr.Elements[j].BeforeExtra, &arr.Elements[j].AfterExtra
	}, &arr.AfterExtra)
}

// removeMember takes member i out of obj.
func removeMember(obj *hujson.Object, i int) {
	gone := obj.Members[i]
	obj.Members = append(obj.Members[:i:i], obj.Members[i+1:]...)
	dropped(gone.Name.BeforeExtra, gone.Value.AfterExtra, i, len(obj.Members), func(j int) (*hujson.Extra, *hujson.Extra) {
		return &obj.Members[j].Name.BeforeExtra, &obj.Members[j].Value.AfterExtra
	}, &obj.AfterExtra)
}

// dropped mends the extras around an entry removed at i from a container
// now holding n, whose entry j's extras are at(j): the entry that follows
// takes the removed one's leading whitespace and comments; a removed last
// entry leaves its comments before the closing bracket and its trailing
// comma (or none) to the new last one.
func dropped(before, after hujson.Extra, i, n int, at func(int) (*hujson.Extra, *hujson.Extra), closing *hujson.Extra) {
	if i < n {
		next, _ := at(i)
		*next = append(append(hujson.Extra{}, before...), bytes.TrimLeft(*next, " \t\r\n")...)
		return
	}
	if len(bytes.TrimSpace(before)) > 0 {
		*closing = append(bytes.TrimRight(append(hujson.Extra{}, before...), " \t\r\n"), *closing...)
	}
	if n == 0 {
		return
	}
	_, prev := at(n - 1)
	switch {
	case after != nil && *prev == nil:
		*prev = hujson.Extra{}
	case after == nil && *prev != nil:
		*closing = append(append(hujson.Extra{}, *prev...), *closing...)
		*prev = nil
	}
}

func lastOf(vs []hujson.Value) *hujson.Value {
	if len(vs) == 0 {
		return nil
	}
	return &vs[len(vs)-1]
}

func memberBefores(obj *hujson.Object) []hujson.Extra {
	out := make([]hujson.Extra, len(obj.Members))
	for i, m := range obj.Members {
		out[i] = m.Name.BeforeExtra
	}
	return out
}

func elementBefores(arr *hujson.Array) []hujson.Extra {
	out := make([]hujson.Extra, len(arr.Elements))
	for i, e := range arr.Elements {
		out[i] = e.BeforeExtra
	}
	return out
}

// indentOf is the indentation of the last entry (given by its leading
// extra) that starts a line, or fallback when none does.
func indentOf(befores []hujson.Extra, fallback string) string {
	for i := len(befores) - 1; i >= 0; i-- {
		if nl := bytes.LastIndexByte(befores[i], '\n'); nl >= 0 {
			return string(befores[i][nl+1:])
		}
	}
	return fallback
}

// unifiedDiff is the change from old to new as one unified-diff hunk
// with three lines of context; old nil is a file that does not exist.
func unifiedDiff(path string, old, new []byte) string {
	a, b := diffLines(old), diffLines(new)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	cs := max(0, p-3)
	endA, endB := min(len(a), len(a)-s+3), min(len(b), len(b)-s+3)
	from := path
	if old == nil {
		from = "/dev/null"
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, path, hunkRange(cs, endA-cs), hunkRange(cs, endB-cs))
	for _, l := range a[cs:p] {
		diffLine(&out, " ", l)
	}
	for _, l := range a[p : len(a)-s] {
		diffLine(&out, "-", l)
	}
	for _, l := range b[p : len(b)-s] {
		diffLine(&out, "+", l)
	}
	for _, l := range a[len(a)-s : endA] {
		diffLine(&out, " ", l)
	}
	return out.String()
}

func diffLines(src []byte) []string {
	lines := strings.SplitAfter(string(src), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func diffLine(out *strings.Builder, mark, line string) {
	out.WriteString(mark + line)
	if !strings.HasSuffix(line, "\n") {
		out.WriteString("\n\\ No newline at end of file\n")
	}
}
