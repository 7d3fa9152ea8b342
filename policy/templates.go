package policy

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

//go:embed templates/*.jsonc
var templateFS embed.FS

// Template is a builtin policy. Its summary is the first line of its file.
type Template struct {
	Name    string
	Summary string
	Source  []byte
}

// Templates lists the builtin templates, sorted by name.
func Templates() []Template {
	entries, err := fs.ReadDir(templateFS, "templates") // observed: not the host (the embedded templates)
	if err != nil {
		panic("policy: BUG: templates not embedded: " + err.Error())
	}
	out := make([]Template, 0, len(entries))
	for _, e := range entries {
		t, _ := LookupTemplate(strings.TrimSuffix(e.Name(), ".jsonc"))
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// LookupTemplate returns the builtin template called name.
func LookupTemplate(name string) (Template, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return Template{}, false
	}
	src, err := templateFS.ReadFile("templates/" + name + ".jsonc")
	if err != nil {
		return Template{}, false
	}
	first, _, _ := strings.Cut(string(src), "\n")
	return Template{Name: name, Summary: strings.TrimPrefix(first, "// "), Source: src}, true
}

// TemplateNames lists the names of the builtin templates.
func TemplateNames() []string {
	var names []string
	for _, t := range Templates() {
		names = append(names, t.Name)
	}
	return names
}

func unknownTemplate(name string) string {
	return fmt.Sprintf("unknown template %q: want one of %s", name, strings.Join(TemplateNames(), ", "))
}

// TemplateWriteTrees are the absolute trees the builtin templates make
// writable ("~/.cache", "/tmp", ...; not the working directory), with "~"
// expanded for home: any sandboxed run may have written there, so a link
// in one is never trusted to lead out of it.
func TemplateWriteTrees(home string) []string {
	templateTrees.once.Do(func() { templateTrees.trees = templateWriteTrees() })
	out := make([]string, 0, len(templateTrees.trees))
	for _, t := range templateTrees.trees {
		out = append(out, Expand(t, "/", home))
	}
	return out
}

// templateTrees are the builtin templates' absolute allowWrite entries as
// written, read once per process.
var templateTrees struct {
	once  sync.Once
	trees []string
}

func templateWriteTrees() []string {
	var out []string
	for _, t := range Templates() {
		p, err := parse("builtin template: "+t.Name, t.Source)
		if err != nil {
			continue
		}
		for _, w := range p.cfg.Filesystem.AllowWrite {
			if (strings.HasPrefix(w, "~/") || strings.HasPrefix(w, "/")) && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}
