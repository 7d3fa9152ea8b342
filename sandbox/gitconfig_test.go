package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseGitConfig(t *testing.T) {
	text := `# comment
[core]
	hooksPath = .husky/_ ; trailing comment
	bare
	editor = "vim -c \"set x\"" # quoted
[includeIf "gitdir:~/work/"]
	path = ~/work/.gitconfig
[remote "Origin"] url = https://example.invalid/x
[alias]
	co = "!sh ./tools/co.sh \
  --flag"
[Filter "lfs"]
	clean = git-lfs clean -- %f
`
	got := parseGitConfig(text)
	want := []gitEntry{
		{key: "core.hookspath", value: ".husky/_"},
		{key: "core.bare", value: "true"},
		{key: "core.editor", value: `vim -c "set x"`},
		{key: "includeif.gitdir:~/work/.path", value: "~/work/.gitconfig"},
		{key: "remote.Origin.url", value: "https://example.invalid/x"},
		{key: "alias.co", value: "!sh ./tools/co.sh   --flag"},
		{key: "filter.lfs.clean", value: "git-lfs clean -- %f"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseGitConfig =\n  %q\nwant\n  %q", got, want)
	}
}

// TestGitNamed: what a config names for git to run or read, including
// what it includes, is found, relative paths from the work tree.
func TestGitNamed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config"), []byte("[include]\n\tpath = ../shared.gitconfig\n[core]\n\thooksPath = .husky/_\n\tfsmonitor = true\n[alias]\n\tx = !./scripts/x.sh --y=/abs/tool\n[credential]\n\thelper = store\n[diff \"pdf\"]\n\ttextconv = tools/pdf2txt\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "../shared.gitconfig"), []byte("[core]\n\tpager = /opt/pager/run\n"), 0o644)
	var includes []string
	entries := readGitConfig(filepath.Join(dir, "config"), "/home/u", 0, &includes)
	var got []string
	for _, n := range gitNamed(entries, "/w", "/home/u") {
		got = append(got, n.path)
	}
	want := []string{"/opt/pager/run", "/w/.husky/_", "/w/.husky", "/w/scripts/x.sh", "/abs/tool", "/w/tools/pdf2txt"}
	if !slices.Equal(got, want) {
		t.Errorf("named = %q, want %q", got, want)
	}
	if want := []string{filepath.Join(filepath.Dir(dir), "shared.gitconfig")}; !slices.Equal(includes, want) {
		t.Errorf("includes = %q, want %q", includes, want)
	}
}
