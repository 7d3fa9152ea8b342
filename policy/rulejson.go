package policy

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// flatRule decodes b into r, which is zero, when b is a rule in the form
// encoding/json writes one: an object of the rule's own keys, spelt as
// its tags spell them, with strings (see plainString) and true or false;
// it reports false, leaving r partly filled, for anything else (another
// key or spelling, a rarer escape, null, a number), which json.Unmarshal
// then reads. What it reads it reads as json.Unmarshal
// would (FuzzRuleJSON holds the two to the same answer).
func flatRule(b []byte, r *Rule) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		if i, ok = ruleValue(b, skipSpace(b, i+1), key, r); !ok {
			return false
		}
		i = skipSpace(b, i)
		switch {
		case i >= len(b):
			return false
		case b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		case b[i] != ',':
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// ruleValue reads the value of key at b[i:] into r, and returns where it
// ends.
func ruleValue(b []byte, i int, key string, r *Rule) (int, bool) {
	if key == "glob" || key == "fold" {
		v := bytes.HasPrefix(b[i:], []byte("true"))
		n := 4
		if !v {
			if !bytes.HasPrefix(b[i:], []byte("false")) {
				return 0, false
			}
			n = 5
		}
		if key == "glob" {
			r.Glob = v
		} else {
			r.Fold = v
		}
		return i + n, true
	}
	dst := ruleString(r, key)
	if dst == nil {
		return 0, false
	}
	s, end, ok := plainString(b, i)
	if !ok {
		return 0, false
	}
	*dst = s
	return end, true
}

// ruleString is the field of r that key names, nil for another key.
func ruleString(r *Rule, key string) *string {
	switch key {
	case "pattern":
		return &r.Pattern
	case "origin":
		return &r.Origin
	case "key":
		return &r.Key
	case "text":
		return &r.Text
	case "source":
		return &r.Source
	case "pos":
		return &r.Pos
	}
	return nil
}

// plainString is the JSON string at b[i:], and where it ends, when it
// holds valid UTF-8, no control character and no escapes but those of
// one byte and \u of a character that is not half a surrogate pair (the
// rest go to encoding/json).
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	var out []byte // the decoded string, once there is an escape
	for i = start; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			if out == nil {
				if !utf8.Valid(b[start:i]) {
					return "", 0, false
				}
				return string(b[start:i]), i + 1, true
			}
			if !utf8.Valid(out) {
				return "", 0, false
			}
			return string(out), i + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)-start), b[start:i]...)
		}
		if i+1 >= len(b) {
			return "", 0, false
		}
		i++
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, i+1)
			if !ok || utf16.IsSurrogate(r) {
				return "", 0, false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// hex4 is the rune of the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipSpace is the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
