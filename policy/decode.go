package policy

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// parsed is one config file decoded, with the position of every value so
// that later checks can point at the exact place a rule was written.
type parsed struct {
	file  string
	cfg   Config
	empty bool           // the file held nothing but whitespace and comments
	pos   map[string]Pos // key path -> position of its value
}

func (p *parsed) errorf(key, format string, args ...any) error {
	return &FileError{File: p.file, Pos: p.pos[key], Key: key, Msg: fmt.Sprintf(format, args...)}
}

// parse decodes JSONC (comments and trailing commas allowed) into a Config,
// rejecting unknown keys, duplicate keys and values of the wrong type.
func parse(file string, src []byte) (*parsed, error) {
	p := &parsed{file: file, pos: map[string]Pos{}}
	v, err := hujson.Parse(src)
	if err != nil {
		if isBlank(src) {
			p.empty = true
			return p, nil
		}
		return nil, syntaxError(file, err)
	}
	d := decoder{p: p, src: src}
	if err := d.decode(&v, reflect.ValueOf(&p.cfg).Elem(), ""); err != nil {
		return nil, err
	}
	return p, nil
}

// isBlank reports whether src holds only whitespace and comments.
func isBlank(src []byte) bool {
	probe := append(append([]byte{}, src...), "\nnull"...)
	v, err := hujson.Parse(probe)
	return err == nil && v.StartOffset > len(src)
}

// syntaxError turns hujson's "hujson: line L, column C: msg" into a FileError.
func syntaxError(file string, err error) error {
	var line, col int
	msg := err.Error()
	if _, serr := fmt.Sscanf(msg, "hujson: line %d, column %d:", &line, &col); serr == nil {
		if inner := errors.Unwrap(err); inner != nil {
			msg = inner.Error()
		}
	}
	msg = strings.TrimPrefix(msg, "hujson: ")
	return &FileError{File: file, Pos: Pos{line, col}, Msg: "invalid JSONC: " + msg}
}

type decoder struct {
	p   *parsed
	src []byte
}

func (d *decoder) fail(v *hujson.Value, key, format string, args ...any) error {
	return &FileError{File: d.p.file, Pos: posAt(d.src, v.StartOffset), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) decode(v *hujson.Value, rv reflect.Value, key string) error {
	d.p.pos[key] = posAt(d.src, v.StartOffset)
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == 'n' {
		if key == "" {
			return d.fail(v, key, "want an object at the top level, got null")
		}
		rv.SetZero() // null means "not set"
		return nil
	}
	switch rv.Kind() {
	case reflect.Struct:
		return d.decodeObject(v, rv, key)
	case reflect.Slice:
		return d.decodeArray(v, rv, key)
	case reflect.Pointer: // only nullable scalars are pointers
		elem := reflect.New(rv.Type().Elem())
		if err := d.decodeLiteral(v, elem.Elem(), key, kindName(rv.Type())); err != nil {
			return err
		}
		rv.Set(elem)
		return nil
	default:
		return d.decodeLiteral(v, rv, key, kindName(rv.Type()))
	}
}

func (d *decoder) decodeObject(v *hujson.Value, rv reflect.Value, key string) error {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return d.fail(v, key, "want an object, got %s", describe(v))
	}
	fields := jsonFields(rv.Type())
	seen := map[string]bool{}
	for i := range obj.Members {
		m := &obj.Members[i]
		name := m.Name.Value.(hujson.Literal).String()
		sub := joinKey(key, name)
		if seen[name] {
			return d.fail(&m.Name, sub, "duplicate key: each key may appear once")
		}
		seen[name] = true
		idx, ok := fields[name]
		if !ok {
			return d.fail(&m.Name, "", "%s", unknownKey(key, name, fields))
		}
		if err := d.decode(&m.Value, rv.Field(idx), sub); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) decodeArray(v *hujson.Value, rv reflect.Value, key string) error {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return d.fail(v, key, "want %s, got %s", kindName(rv.Type()), describe(v))
	}
	out := reflect.MakeSlice(rv.Type(), len(arr.Elements), len(arr.Elements))
	for i := range arr.Elements {
		if err := d.decodeElem(&arr.Elements[i], out.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
			return err
		}
	}
	rv.Set(out)
	return nil
}

// decodeElem decodes one array element; unlike an object member, an element
// may not be null.
func (d *decoder) decodeElem(v *hujson.Value, rv reflect.Value, key string) error {
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == 'n' {
		return d.fail(v, key, "want %s, got null", kindName(rv.Type()))
	}
	return d.decode(v, rv, key)
}

func (d *decoder) decodeLiteral(v *hujson.Value, rv reflect.Value, key, want string) error {
	lit, ok := v.Value.(hujson.Literal)
	if !ok {
		return d.fail(v, key, "want %s, got %s", want, describe(v))
	}
	switch {
	case rv.Kind() == reflect.Bool && (lit.Kind() == 't' || lit.Kind() == 'f'):
		rv.SetBool(lit.Bool())
	case rv.Kind() == reflect.String && lit.Kind() == '"':
		rv.SetString(lit.String())
	case rv.Kind() == reflect.Int && lit.Kind() == '0':
		n, err := strconv.ParseInt(string(lit), 10, 32)
		if err != nil {
			return d.fail(v, key, "want a whole number, got %s", lit)
		}
		rv.SetInt(n)
	default:
		return d.fail(v, key, "want %s, got %s", want, describe(v))
	}
	return nil
}

// jsonFields maps each config key of a struct type to its field index.
func jsonFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}

func unknownKey(parent, name string, fields map[string]int) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	where := "at the top level"
	if parent != "" {
		where = "in " + parent
	}
	msg := fmt.Sprintf("unknown key %q %s", name, where)
	if s := closest(name, keys); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; known keys: " + strings.Join(keys, ", ")
}

// closest returns the key within edit distance 2 of name, or "".
func closest(name string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance of a and b (a swap
// of two neighbours counts one, as "psuh" for "push"): for the keys
// a config misspells and the git subcommands help.autocorrect corrects.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "a whole number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Int {
			return "an array of whole numbers"
		}
		return "an array of strings"
	case reflect.Pointer:
		return kindName(t.Elem()) + " or null"
	default:
		return "an object"
	}
}

func describe(v *hujson.Value) string {
	switch x := v.Value.(type) {
	case *hujson.Object:
		return "an object"
	case *hujson.Array:
		return "an array"
	case hujson.Literal:
		switch x.Kind() {
		case '"':
			return "the string " + string(x)
		case '0':
			return "the number " + string(x)
		default:
			return string(x)
		}
	}
	return "something else"
}
