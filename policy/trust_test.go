package policy

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTrustCheck(t *testing.T) {
	const (
		project = `{"extends": "@base", "filesystem": {"allowWrite": ["."]}}`
		planted = `{"filesystem": {"allowWrite": ["/"]}}`
	)
	tests := []struct {
		name     string
		files    map[string]string
		dir      string            // below the tree root; "work" when empty
		settings string            // --settings
		template string            // --template
		trusted  map[string]string // path below the root -> content trusted
		want     []string          // problems, as problemText writes them
	}{
		{
			name:  "untrusted project file",
			files: map[string]string{"work/fence.jsonc": project},
			want:  []string{"untrusted R/work/fence.jsonc"},
		},
		{
			name:    "trusted project file",
			files:   map[string]string{"work/fence.jsonc": project},
			trusted: map[string]string{"work/fence.jsonc": project},
		},
		{
			name:    "changed since trusted",
			files:   map[string]string{"work/fence.jsonc": planted},
			trusted: map[string]string{"work/fence.jsonc": project},
			want:    []string{"changed R/work/fence.jsonc"},
		},
		{
			name:    "a trusted file elsewhere vouches for nothing here",
			files:   map[string]string{"work/sub/fence.jsonc": project, "work/fence.jsonc": project},
			dir:     "work/sub",
			trusted: map[string]string{"work/fence.jsonc": project},
			want:    []string{"untrusted R/work/sub/fence.jsonc"},
		},
		{
			name:  "an empty project file sets the policy too",
			files: map[string]string{"work/fence.jsonc": "// nothing\n", "home/.config/fence/fence.jsonc": project},
			want:  []string{"untrusted R/work/fence.jsonc"},
		},
		{
			name: "files extended by path need trust; the user config and templates do not",
			files: map[string]string{
				"work/fence.jsonc":               `{"extends": "./base.jsonc"}`,
				"work/base.jsonc":                `{"extends": "~/.config/fence/fence.jsonc"}`,
				"home/.config/fence/fence.jsonc": `{"extends": "code"}`,
			},
			trusted: map[string]string{"work/fence.jsonc": `{"extends": "./base.jsonc"}`},
			want:    []string{"untrusted R/work/base.jsonc"},
		},
		{
			name:  "the user config alone needs no trust",
			files: map[string]string{"home/.config/fence/fence.jsonc": planted},
		},
		{
			name:     "--settings needs no trust",
			files:    map[string]string{"work/fence.jsonc": planted, "work/p.jsonc": `{"extends": "./fence.jsonc"}`},
			settings: "p.jsonc",
		},
		{
			name:     "--template needs no trust",
			files:    map[string]string{"work/fence.jsonc": planted},
			template: "code",
		},
		{
			name:    "a trusted file that is gone hands the run to the config above",
			files:   map[string]string{"work/fence.jsonc": project},
			dir:     "work/sub",
			trusted: map[string]string{"work/sub/fence.jsonc": `{}`, "work/fence.jsonc": project},
			want:    []string{"gone R/work/sub/fence.jsonc"},
		},
		{
			name:    "a trusted fence.jsonc gone hands the directory to its fence.json",
			files:   map[string]string{"work/fence.json": project},
			trusted: map[string]string{"work/fence.jsonc": project, "work/fence.json": project},
			want:    []string{"gone R/work/fence.jsonc"},
		},
		{
			name:    "a trusted file gone, and no config left but the default",
			trusted: map[string]string{"work/fence.jsonc": project},
			want:    []string{"gone R/work/fence.jsonc"},
		},
		{
			name:    "a trusted file below the working directory is not discovery's",
			files:   map[string]string{"work/fence.jsonc": project},
			trusted: map[string]string{"work/fence.jsonc": project, "work/sub/fence.jsonc": project},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tree(t, tt.files)
			root := filepath.Dir(opts.Dir)
			if tt.dir != "" {
				opts.Dir = filepath.Join(root, tt.dir)
			}
			opts.Settings, opts.Template = tt.settings, tt.template
			res, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			var rec Trust
			for p, content := range tt.trusted {
				rec.Add(filepath.Join(root, p), HashConfig([]byte(content)), "")
			}
			var got []string
			for _, p := range rec.Check(opts, res, nil) {
				got = append(got, problemText(p, root))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
}

func problemText(p TrustProblem, root string) string {
	kind := "untrusted"
	switch {
	case p.Gone():
		kind = "gone"
	case p.Changed():
		kind = "changed"
	}
	return kind + " " + strings.Replace(p.Path, root, "R", 1)
}

// flipFS serves each file's first bytes once and other bytes after: the
// hash must be of what Load parsed, not of a later read.
type flipFS struct {
	first, later map[string]string
	seen         map[string]bool
}

func (f *flipFS) ReadFile(path string) ([]byte, error) {
	if s, ok := f.first[path]; ok && !f.seen[path] {
		f.seen[path] = true
		return []byte(s), nil
	}
	if s, ok := f.later[path]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
}

func TestLoadHashesWhatItParsed(t *testing.T) {
	const parsed, swapped = `{"allowPty": true}`, `{"filesystem": {"allowWrite": ["/"]}}`
	fsys := &flipFS{first: map[string]string{"/w/fence.jsonc": parsed}, later: map[string]string{"/w/fence.jsonc": swapped}, seen: map[string]bool{}}
	res, err := Load(Options{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Hashes["/w/fence.jsonc"], HashConfig([]byte(parsed)); got != want {
		t.Errorf("Hashes[/w/fence.jsonc] = %s, want %s (the parsed bytes)", got, want)
	}
	if !res.Config.AllowPty {
		t.Errorf("the config is not the one parsed")
	}
}

func TestParseTrust(t *testing.T) {
	hash := HashConfig([]byte("x"))
	tests := []struct {
		name, in, err string
	}{
		{"valid", `{"version": 1, "files": {"/w/fence.jsonc": {"sha256": "` + hash + `", "trusted": "2025-01-01T00:00:00Z"}}}`, ""},
		{"empty", `{"version": 1}`, ""},
		{"other version", `{"version": 2, "files": {}}`, "version 2"},
		{"unknown key", `{"version": 1, "files": {}, "all": true}`, "unknown field"},
		{"relative path", `{"version": 1, "files": {"fence.jsonc": {"sha256": "` + hash + `"}}}`, "not an absolute path"},
		{"short hash", `{"version": 1, "files": {"/w/fence.jsonc": {"sha256": "abcd"}}}`, "not a SHA-256"},
		{"not JSON", `trust me`, "decode trust record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := ParseTrust([]byte(tt.in))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("ParseTrust = %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("ParseTrust error = %v, want one containing %q", err, tt.err)
			case err == nil:
				again, err := ParseTrust(rec.JSON())
				if err != nil || len(again.Files) != len(rec.Files) {
					t.Errorf("ParseTrust(JSON()) = %v, %v; want the record back", again, err)
				}
			}
		})
	}
}

func TestTrustAddRemove(t *testing.T) {
	var rec Trust
	a, b := HashConfig([]byte("a")), HashConfig([]byte("b"))
	if was := rec.Add("/w/fence.jsonc", a, ""); was != "" {
		t.Errorf("Add on an empty record = %q, want \"\"", was)
	}
	if was := rec.Add("/w/fence.jsonc", b, ""); was != a {
		t.Errorf("Add over a = %q, want %q", was, a)
	}
	if !rec.Trusts("/w/fence.jsonc", b) || rec.Trusts("/w/fence.jsonc", a) {
		t.Errorf("Trusts after Add(b): want b only")
	}
	if !rec.Remove("/w/fence.jsonc") || rec.Remove("/w/fence.jsonc") {
		t.Errorf("Remove: want true, then false")
	}
}
