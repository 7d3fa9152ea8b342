package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// GrantKeys are the list keys `fence config allow|deny` may add to.
var GrantKeys = []string{
	"filesystem.allowRead", "filesystem.allowExecute", "filesystem.allowWrite",
	"filesystem.denyRead", "filesystem.denyWrite",
	"network.allowedDomains", "network.deniedDomains",
	"command.allow", "command.deny",
}

// AddRule returns src, a config file, with value appended to the list at
// key (such as "filesystem.allowWrite"), creating the list and its section
// when they are missing. Everything else in the file, comments and layout
// included, is kept byte for byte; the new entry follows the indentation
// of its neighbours. added is false, and src comes back unchanged, when the
// list holds value already. The result is validated as a config file.
func AddRule(file string, src []byte, key, value string) (out []byte, added bool, err error) {
	section, list, ok := strings.Cut(key, ".")
	if !ok || !slices.Contains(GrantKeys, key) {
		return nil, false, fmt.Errorf("%q is not a list fence config can add to", key)
	}
	if isBlank(src) {
		// Keep the comments of a file that holds nothing else.
		src = append(bytes.TrimRight(src, " \t\r\n"), "\n{\n}\n"...)
		src = bytes.TrimLeft(src, "\n")
	}
	root, err := hujson.Parse(src)
	if err != nil {
		return nil, false, syntaxError(file, err)
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, false, &FileError{File: file, Msg: "want an object at the top level"}
	}
	unit := indentUnit(top)
	added, err = addToSection(top, unit, section, list, value)
	if err != nil || !added {
		return src, false, err
	}
	out = root.Pack()
	if _, err := parseValid(file, out); err != nil {
		return nil, false, fmt.Errorf("the file would not be valid with %s %q: %w", key, value, err)
	}
	return out, true, nil
}

// addToSection appends value to top[section][list], creating what is
// missing, laid out like what is around it.
func addToSection(top *hujson.Object, unit, section, list, value string) (bool, error) {
	topIndent := indentOf(memberExtras(top), unit)
	sec := member(top, section)
	if sec == nil {
		text := fmt.Sprintf("{%s: [%s]}", jsonQuote(list), jsonQuote(value))
		if multiline(top) {
			text = fmt.Sprintf("{\n%s%s%s: [%s]\n%s}", topIndent, unit, jsonQuote(list), jsonQuote(value), topIndent)
		}
		appendMember(top, section, text, topIndent)
		return true, nil
	}
	obj, ok := sec.Value.(*hujson.Object)
	if !ok {
		return false, fmt.Errorf("%q is not an object", section)
	}
	secIndent := indentOf(memberExtras(obj), topIndent+unit)
	lst := member(obj, list)
	if lst == nil {
		appendMember(obj, list, "["+jsonQuote(value)+"]", secIndent)
		return true, nil
	}
	arr, ok := lst.Value.(*hujson.Array)
	if !ok {
		return false, fmt.Errorf("%s.%s is not a list", section, list)
	}
	var extras []hujson.Extra
	for _, e := range arr.Elements {
		if lit, ok := e.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == value {
			return false, nil
		}
		extras = append(extras, e.BeforeExtra)
	}
	e := hujson.Value{Value: hujson.String(value)}
	place(&e.BeforeExtra, &e.AfterExtra, lastOf(arr.Elements), &arr.AfterExtra, multiline(arr), indentOf(extras, secIndent+unit))
	arr.Elements = append(arr.Elements, e)
	return true, nil
}

// member finds the value of name in obj.
func member(obj *hujson.Object, name string) *hujson.Value {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// appendMember adds "name": valueText as obj's last member.
func appendMember(obj *hujson.Object, name, valueText, indent string) {
	v, err := hujson.Parse([]byte(valueText))
	if err != nil {
		panic("policy: bad generated JSON: " + valueText) // built from quoted strings
	}
	v.BeforeExtra = hujson.Extra(" ")
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: v}
	var last *hujson.Value
	if n := len(obj.Members); n > 0 {
		last = &obj.Members[n-1].Value
	}
	place(&m.Name.BeforeExtra, &m.Value.AfterExtra, last, &obj.AfterExtra, multiline(obj), indent)
	obj.Members = append(obj.Members, m)
}

func lastOf(vs []hujson.Value) *hujson.Value {
	if len(vs) == 0 {
		return nil
	}
	return &vs[len(vs)-1]
}

// place sets the extras (before and after) of a value appended after last
// in a container whose extra before the closing bracket is *closing. In a
// container laid out on several lines the value gets a line of its own at
// indent, and a comment that ended the last line stays there; a one-line
// container stays on one line. A trailing comma stays when there was one.
func place(before, after *hujson.Extra, last *hujson.Value, closing *hujson.Extra, multi bool, indent string) {
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
		return
	}
	*before = hujson.Extra(string((*closing)[:nl]) + "\n" + indent)
	*closing = (*closing)[nl:]
}

// multiline reports whether a container is laid out on several lines.
func multiline(v hujson.ValueTrimmed) bool {
	return bytes.ContainsRune(hujson.Value{Value: v}.Pack(), '\n')
}

func memberExtras(obj *hujson.Object) []hujson.Extra {
	out := make([]hujson.Extra, len(obj.Members))
	for i, m := range obj.Members {
		out[i] = m.Name.BeforeExtra
	}
	return out
}

// indentOf is the indentation of the last value (given by its leading
// extra) that starts a line, or fallback when none does.
func indentOf(befores []hujson.Extra, fallback string) string {
	for i := len(befores) - 1; i >= 0; i-- {
		if nl := bytes.LastIndexByte(befores[i], '\n'); nl >= 0 {
			return string(befores[i][nl+1:])
		}
	}
	return fallback
}

// indentUnit guesses one level of indentation from the top-level members:
// a tab or some spaces, two when nothing tells.
func indentUnit(top *hujson.Object) string {
	if ind := indentOf(memberExtras(top), ""); ind != "" {
		return ind
	}
	return "  "
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
