package sandbox

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeANSIC is the text of a $'...' word as bash reads it: the
// backslash escapes of ANSI C (\n, \t, \\, \', \xHH, \NNN, \uHHHH,
// \UHHHHHHHH, \cX, \e, ...). ok is false for an escape bash reads in a way
// fence does not follow, so that the word is judged as built at run time
// rather than misread. $'git' is git, and so is $'\x67it'.
func decodeANSIC(s string) (string, bool) {
	if !strings.ContainsRune(s, '\\') {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		i++
		if c, ok := ansicSimple[s[i]]; ok {
			b.WriteByte(c)
			continue
		}
		n, used, ok := ansicNumber(s[i:])
		if !ok {
			return "", false
		}
		if n < utf8.RuneSelf || s[i] == 'x' || s[i] >= '0' && s[i] <= '7' {
			b.WriteByte(byte(n)) // \xHH and \NNN are bytes
		} else {
			b.WriteRune(rune(n))
		}
		i += used - 1
	}
	return b.String(), true
}

// ansicSimple are the one-letter escapes of $'...'.
var ansicSimple = map[byte]byte{
	'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
	'\\': '\\', '\'': '\'', '"': '"', '?': '?',
}

// ansicNumber reads the escape at the start of s (after the backslash):
// \NNN octal, \xHH, \uHHHH, \UHHHHHHHH, \cX; how many bytes it used.
func ansicNumber(s string) (value uint64, used int, ok bool) {
	digits := func(from, most, base int) (uint64, int, bool) {
		end := from
		for end < len(s) && end-from < most && isDigit(s[end], base) {
			end++
		}
		if end == from {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(s[from:end], base, 32)
		return v, end, err == nil
	}
	switch c := s[0]; {
	case c >= '0' && c <= '7':
		return digits(0, 3, 8)
	case c == 'x':
		return digits(1, 2, 16)
	case c == 'u':
		return digits(1, 4, 16)
	case c == 'U':
		return digits(1, 8, 16)
	case c == 'c' && len(s) > 1:
		return uint64(s[1] & 0x1f), 2, true
	}
	return 0, 0, false
}

// isDigit reports whether c is a digit of base 8 or 16.
func isDigit(c byte, base int) bool {
	if base == 8 {
		return c >= '0' && c <= '7'
	}
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
