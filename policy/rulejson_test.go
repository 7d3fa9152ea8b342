package policy

import (
	"encoding/json"
	"testing"
)

// ruleJSONSeeds are rules as fence writes them and in the forms the
// direct reading leaves to encoding/json.
var ruleJSONSeeds = []string{
	`{"pattern":"/home/u/.ssh","origin":"always protected: ssh keys","key":"mandatory.ssh"}`,
	`{"pattern":"**/.env","glob":true,"fold":true,"origin":"filesystem.denyRead \".env\"","key":"filesystem.denyRead","text":".env","source":"/p/fence.jsonc","pos":"/p/fence.jsonc:3:5"}`,
	` { "pattern" : "/a" , "glob" : false } `,
	`{}`,
	`{"pattern":"/caf\u00e9"}`,
	`{"pattern":"/café/日本"}`,
	`{"pattern":"a\"b"}`,
	`{"Pattern":"/a"}`,
	`{"pattern":"/a","pattern":"/b"}`,
	`{"pattern":null}`,
	`{"glob":1}`,
	`{"other":"x"}`,
	"{\"pattern\":\"\xff\"}",
	"{\"pattern\":\"a\tb\"}",
	`{"pattern":"/a",}`,
	`{"pattern":"/a"} x`,
	`["/a"]`,
	`{"glob":truex}`,
	`{"fold":false,"glob":true}`,
}

// TestRuleJSON: every seed reads as encoding/json reads it into a Rule
// without the method, and the forms fence writes are read directly.
func TestRuleJSON(t *testing.T) {
	for _, s := range ruleJSONSeeds[:6] {
		var r Rule
		if !flatRule([]byte(s), &r) {
			t.Errorf("flatRule(%s) = false, want it read directly", s)
		}
	}
	for _, s := range ruleJSONSeeds {
		sameAsJSON(t, []byte(s))
	}
}

// FuzzRuleJSON: what flatRule reads, encoding/json reads alike; and
// UnmarshalJSON fails exactly when encoding/json does.
func FuzzRuleJSON(f *testing.F) {
	for _, s := range ruleJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsJSON(t, b) })
}

func sameAsJSON(t *testing.T, b []byte) {
	t.Helper()
	type plain Rule
	var want plain
	werr := json.Unmarshal(b, &want)
	var direct Rule
	if flatRule(b, &direct) && (werr != nil || direct != Rule(want)) {
		t.Fatalf("flatRule(%q) = %+v, but encoding/json reads %+v (%v)", b, direct, want, werr)
	}
	var got Rule
	if err := got.UnmarshalJSON(b); (err != nil) != (werr != nil) || err == nil && got.Pattern != want.Pattern {
		t.Fatalf("UnmarshalJSON(%q) = %+v, %v; encoding/json reads %+v, %v", b, got, err, want, werr)
	}
}
