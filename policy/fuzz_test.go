package policy

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// FuzzParse feeds the loader arbitrary bytes. It must never panic, and any
// config it accepts must survive a round trip through `config show` JSON:
// what fence prints, fence reads back as the same policy.
func FuzzParse(f *testing.F) {
	for _, t := range Templates() {
		f.Add(t.Source)
	}
	f.Add([]byte(``))
	f.Add([]byte(`// c`))
	f.Add([]byte(`{"network": {"allowLocalOutboundPorts": [1, 65535], "allowLocalOutbound": null}}`))
	f.Add([]byte(`{"filesystem": {"allowRead": ["~/x", "[a-z]/**"]}, "macos": {"mach": {"lookup": ["com.*"]}}}`))
	f.Add([]byte(`{"devices": {"mode": "host", "allow": ["/dev/kvm"]}, "command": {"useDefaults": false}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := parseValid("fuzz", src)
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				t.Fatalf("error is not a *FileError: %T %v", err, err)
			}
			return
		}
		once := Merge(Config{}, p.cfg).JSON()
		again, err := parseValid("shown", once)
		if err != nil {
			t.Fatalf("shown config does not load: %v\n%s", err, once)
		}
		if twice := Merge(Config{}, again.cfg).JSON(); !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the config:\n%s\nthen\n%s", once, twice)
		}
	})
}

// FuzzCovers compares the path matcher with a plain reference: a glob
// covers a path when it matches the path or a directory above it. The
// matcher's quick test in front of the glob match must never change the
// answer.
func FuzzCovers(f *testing.F) {
	for _, s := range [][2]string{
		{"/w/**/.env", "/w/a/.env/b"}, {"/w/**/*.pem", "/w/K/SERVER.PEM"}, {"/h/.ssh/id_*", "/h/.ssh/id_rsa.pub"},
		{"/w/**", "/w"}, {"/w/*/x", "/w/a/x/y"}, {"/w/{a,b}/c", "/w/b/c"}, {"/w/[ab]?", "/w/az"}, {`/w/a\*b`, "/w/a*b"},
		{"/**/.git/hooks", "/r/.git/hooks/pre-commit"}, {"/w/x", "/w/xy"}, {"/", "/anything"},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, pattern, p string, fold bool) {
		// Patterns reach the matcher absolute and cleaned (see Expand).
		if !path.IsAbs(pattern) || path.Clean(pattern) != pattern || !path.IsAbs(p) || path.Clean(p) != p || !doublestar.ValidatePattern(pattern) {
			return
		}
		want := coversReference(pattern, p, fold)
		if got := Covers(pattern, p, fold); got != want {
			t.Fatalf("Covers(%q, %q, fold %v) = %v, the reference says %v", pattern, p, fold, got, want)
		}
	})
}

func coversReference(pattern, p string, fold bool) bool {
	if !hasGlob(pattern) {
		return coversPlain(pattern, p, fold)
	}
	if fold {
		pattern, p = strings.ToLower(pattern), strings.ToLower(p)
	}
	for q := p; ; q = path.Dir(q) {
		if ok, _ := doublestar.Match(pattern, q); ok {
			return true
		}
		if path.Dir(q) == q {
			return false
		}
	}
}
