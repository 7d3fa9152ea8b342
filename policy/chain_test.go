package policy

import (
	"reflect"
	"testing"
)

// TestChainNamed: the printed chain stops at the first builtin template,
// whose own extends are part of it; files and @base before it stay.
func TestChainNamed(t *testing.T) {
	proj := Source{Kind: KindProject, Path: "/r/fence.jsonc"}
	file := Source{Kind: KindFile, Path: "/r/team.jsonc"}
	base := Source{Kind: KindBaseUser, Path: "/h/.config/fence/fence.jsonc"}
	flags := Source{Kind: KindCommandLine, Flags: "--no-network"}
	tmpl := func(n string) Source { return Source{Kind: KindTemplate, Name: n} }
	for _, tc := range []struct {
		name     string
		in, want Chain
	}{
		{"no template", Chain{proj, file}, Chain{proj, file}},
		{"template steps", Chain{proj, tmpl("code"), tmpl("ci"), tmpl("read-only")}, Chain{proj, tmpl("code")}},
		{"root template", Chain{tmpl("ci"), tmpl("workspace-write"), tmpl("read-only")}, Chain{tmpl("ci")}},
		{"through files", Chain{flags, proj, file, base, tmpl("code-strict"), tmpl("code")}, Chain{flags, proj, file, base, tmpl("code-strict")}},
		{"leaf template", Chain{proj, tmpl("read-only")}, Chain{proj, tmpl("read-only")}},
	} {
		if got := tc.in.Named(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Named(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}
