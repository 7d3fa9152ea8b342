package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestScaffoldMeansMinimal loads both configs for every template: the
// scaffold, all of whose keys are commented out, resolves to what the
// minimal config does.
func TestScaffoldMeansMinimal(t *testing.T) {
	dir := t.TempDir()
	for _, tmpl := range Templates() {
		var configs []Config
		for _, make := range []func(string) ([]byte, error){Minimal, Scaffold} {
			text, err := make(tmpl.Name)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "fence.jsonc")
			if err := os.WriteFile(file, text, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load(Options{Settings: file, Dir: dir, Home: dir, UserConfigDir: filepath.Join(dir, "user")})
			if err != nil {
				t.Fatalf("%s: load:\n%s\n%v", tmpl.Name, text, err)
			}
			configs = append(configs, res.Config)
		}
		if !reflect.DeepEqual(configs[0], configs[1]) {
			t.Errorf("%s: scaffold resolves to\n%+v\nminimal to\n%+v", tmpl.Name, configs[1], configs[0])
		}
	}
	if _, err := Scaffold("no-such-template"); err == nil {
		t.Error("Scaffold(no-such-template) gave no error")
	}
}

// TestScaffoldNamesEveryKey checks the scaffold against the schema, and,
// uncommented, against the decoder: every key the schema names is in
// the scaffold, and every one decodes, so schema and decoder agree.
func TestScaffoldNamesEveryKey(t *testing.T) {
	text, err := Scaffold("code")
	if err != nil {
		t.Fatal(err)
	}
	root, err := parseSchemaNode(Schema)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, n schemaNode)
	walk = func(prefix string, n schemaNode) {
		for _, p := range n.props {
			if p.name == "$schema" {
				continue
			}
			want := regexp.MustCompile(`(?m)^` + prefix + `(// )?"` + regexp.QuoteMeta(p.name) + `": `)
			if !want.Match(text) {
				t.Errorf("scaffold lacks %q at depth %d", p.name, len(prefix)/2)
			}
			walk(prefix+"  ", p)
		}
	}
	walk("  ", root)
	uncommented := regexp.MustCompile(`(?m)^(\s*)// (".*": .*,)$`).ReplaceAll(text, []byte("$1$2"))
	if _, err := parse("scaffold.jsonc", uncommented); err != nil {
		t.Errorf("the scaffold, uncommented, does not decode: %v\n%s", err, uncommented)
	}
	if strings.Count(string(text), "\"extends\"") != 1 {
		t.Errorf("scaffold has not one extends:\n%s", text)
	}
}
