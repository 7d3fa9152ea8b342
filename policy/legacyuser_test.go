package policy

import (
	"io/fs"
	"testing"
)

// filesFS is a set of config files by absolute path.
type filesFS map[string]string

func (f filesFS) ReadFile(path string) ([]byte, error) {
	if s, ok := f[path]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

// TestLegacyUserConfig: ~/.fence.jsonc, then ~/.fence.json, are the user
// config when the user config dir holds none and no project file is
// found; @base and a file extends reach them as the user config; the
// chain names them so; LegacyUserConfig says which was read.
func TestLegacyUserConfig(t *testing.T) {
	const (
		jsonc   = "/h/.fence.jsonc"
		json    = "/h/.fence.json"
		current = "/h/.config/fence/fence.jsonc"
		project = "/w/fence.jsonc"
	)
	tests := []struct {
		name   string
		files  filesFS
		chain  string // labels, joined by " > "
		legacy string
	}{
		{"json alone", filesFS{json: `{}`}, "user config: " + json, json},
		{"jsonc before json", filesFS{json: `{}`, jsonc: `{}`}, "user config: " + jsonc, jsonc},
		{"the user config dir first", filesFS{jsonc: `{}`, current: `{}`}, "user config: " + current, ""},
		{"a project file first", filesFS{jsonc: `{}`, project: `{}`}, "project config: " + project, ""},
		{"@base reaches it", filesFS{json: `{}`, project: `{"extends": "@base"}`}, "project config: " + project + " > @base user config: " + json, json},
		{"a file extends it by path", filesFS{json: `{}`, project: `{"extends": "~/.fence.json"}`}, "project config: " + project + " > user config: " + json, json},
		{"empty, the builtin default", filesFS{json: "// nothing\n"}, "builtin default (no config loaded from " + json + ")", json},
		{"none", filesFS{}, "builtin default (no config loaded from " + current + ")", ""},
	}
	for _, tt := range tests {
		opts := Options{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence", FS: tt.files}
		res, err := Load(opts)
		if err != nil {
			t.Errorf("%s: Load: %v", tt.name, err)
			continue
		}
		chain := ""
		for i, s := range res.Chain {
			if i > 0 {
				chain += " > "
			}
			chain += s.Label()
		}
		if chain != tt.chain {
			t.Errorf("%s: chain %q, want %q", tt.name, chain, tt.chain)
		}
		if got := res.LegacyUserConfig(opts); got != tt.legacy {
			t.Errorf("%s: LegacyUserConfig() = %q, want %q", tt.name, got, tt.legacy)
		}
	}
}

// TestLegacyUserConfigProtected: no sandbox may write the legacy user
// config files, whether they exist or not.
func TestLegacyUserConfigProtected(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"~"}}}, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	for _, path := range []string{"/h/.fence.jsonc", "/h/.fence.json"} {
		if d := p.CheckPath("write", path, path); d.Allowed || d.Rule != KeyConfigPath {
			t.Errorf("CheckPath(write, %s) = %v %s, want denied by %s", path, d.Allowed, d.Rule, KeyConfigPath)
		}
	}
}
