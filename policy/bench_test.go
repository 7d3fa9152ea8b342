package policy

import (
	"os"
	"path/filepath"
	"testing"
)

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
	root := b.TempDir()
	files := map[string]string{
		"repo/fence.jsonc":               `{"extends": "@base", "filesystem": {"allowWrite": ["."], "denyRead": ["secrets/**"]}}`,
		"home/.config/fence/fence.jsonc": `{"extends": "code", "network": {"allowedDomains": ["example.com"]}}`,
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	dir := filepath.Join(root, "repo/a/b/c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	opts := Options{Dir: dir, Home: filepath.Join(root, "home"), UserConfigDir: filepath.Join(root, "home/.config/fence")}
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
