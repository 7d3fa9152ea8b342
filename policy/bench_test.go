package policy

import "testing"

// BenchmarkLoadTemplate measures resolving the code template chain (four
// embedded templates, parsed, validated and merged), which every fence
// call that uses -t code pays.
func BenchmarkLoadTemplate(b *testing.B) {
	opts := Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"}
	for b.Loop() {
		if _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadProject measures discovery from a nested directory, a
// project file extending the user config, which extends code.
func BenchmarkLoadProject(b *testing.B) {
	opts := tree(b, map[string]string{
		"work/fence.jsonc":               `{"extends": "@base", "filesystem": {"allowWrite": ["."], "denyRead": ["secrets/**"]}}`,
		"work/a/b/c/.keep":               ``,
		"home/.config/fence/fence.jsonc": `{"extends": "code", "network": {"allowedDomains": ["example.com"]}}`,
	})
	opts.Dir += "/a/b/c"
	for b.Loop() {
		if _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShow measures rendering the resolved code template as JSON.
func BenchmarkShow(b *testing.B) {
	r, err := Load(Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = r.Config.JSON()
	}
}
