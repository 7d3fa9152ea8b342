package sandbox

import (
	"maps"
	"slices"
	"testing"
)

// TestLastNames: a literal last segment or a brace of literals gives the
// names a match can end in; anything else gives none, so the glob is
// matched on every entry.
func TestLastNames(t *testing.T) {
	for pattern, want := range map[string][]string{
		"/w/**/.env":              {".env"},
		"/w/**/{.claude,.codex}":  {".claude", ".codex"},
		"/w/**/.github/hooks":     {"hooks"},
		"/w/**/*.pem":             nil,
		"/w/**":                   nil,
		"/w/**/{a,b*}":            nil,
		"/w/**/{a,{b,c}}":         nil,
		"/w/**/\\*":               nil,
		"/w/**/{a,}":              nil,
		"/h/.local/lib/python*/x": {"x"},
	} {
		got := lastNames(pattern)
		if want == nil && got != nil || !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
			t.Errorf("lastNames(%q) = %v, want %v", pattern, got, want)
		}
	}
}
