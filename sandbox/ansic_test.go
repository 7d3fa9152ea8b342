package sandbox

import "testing"

// TestDecodeANSIC: $'...' as bash reads it, and the escapes fence does
// not follow refused (the word is then judged as built at run time).
func TestDecodeANSIC(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`git`, "git", true},
		{`\x67it`, "git", true},
		{`g\151t`, "git", true},
		{`\u0067it`, "git", true},
		{`\U00000067it`, "git", true},
		{`a\tb\n`, "a\tb\n", true},
		{`it\'s`, "it's", true},
		{`\cA`, "\x01", true},
		{`\e[0m`, "\x1b[0m", true},
		{`\u00e9`, "é", true},
		{`\xZZ`, "", false},
		{`\q`, "", false},
		{`trailing\`, "", false},
	} {
		got, ok := decodeANSIC(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("decodeANSIC(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
