package sandbox

import (
	"slices"
	"testing"
)

// TestSkipLoader: a dynamic loader run as a program runs its first
// operand, after its options and their values; --list and --verify run
// nothing.
func TestSkipLoader(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"/usr/bin/git", "push"}, []string{"/usr/bin/git", "push"}},
		{[]string{"--library-path", "/lib", "/usr/bin/git", "push"}, []string{"/usr/bin/git", "push"}},
		{[]string{"--preload", "x.so", "--argv0", "sh", "git", "push"}, []string{"git", "push"}},
		{[]string{"--inhibit-cache", "--inhibit-rpath", "a", "--audit", "b", "git"}, []string{"git"}},
		{[]string{"--glibc-hwcaps-mask", "x", "--glibc-hwcaps-prepend", "y", "git"}, []string{"git"}},
		{[]string{"--unknown", "git", "push"}, []string{"git", "push"}},
		{[]string{"--", "git", "push"}, []string{"git", "push"}},
		{[]string{"--list", "/usr/bin/git"}, nil},
		{[]string{"--verify", "/usr/bin/git"}, nil},
		{[]string{"--library-path"}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		words := make([]word, len(tt.args))
		for i, a := range tt.args {
			words[i] = word{text: a, literal: true}
		}
		var got []string
		for _, w := range skipLoader(words) {
			got = append(got, w.text)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("skipLoader(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestIsLoader(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"ld-linux-x86-64.so.2", true},
		{"ld-linux-aarch64.so.1", true},
		{"ld-linux.so.2", true},
		{"ld-musl-x86_64.so.1", true},
		{"ld-musl-newarch.so.1", true},
		{"ld-2.31.so", true},
		{"ld.so", true},
		{"ld.so.1", true},
		{"ld64.so.2", true},
		{"libc.musl-x86_64.so.1", true},
		{"libc.so.6", false},
		{"ld", false},
		{"ldd", false},
		{"ld.gold", false},
		{"ld.bfd", false},
		{"git", false},
	}
	for _, tt := range tests {
		if got := IsLoader(tt.name); got != tt.want {
			t.Errorf("IsLoader(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPreflightLoader: the loader is unwrapped like env or nice, in a
// shell string and in argv.
func TestPreflightLoader(t *testing.T) {
	p := commandPolicy("allow")
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"/lib64/ld-linux-x86-64.so.2 /usr/bin/git push", true},
		{"ld-linux-aarch64.so.1 --library-path /lib git push origin", true},
		{"/lib/ld-musl-x86_64.so.1 --preload x.so git push", true},
		{"env ld.so git push", true},
		{"ld-linux-x86-64.so.2 ld-linux-x86-64.so.2 git push", true},
		{"ld-linux-x86-64.so.2 --argv0 ls git push", true},
		{"ld-linux-x86-64.so.2 /usr/bin/git status", false},
		{"ld-linux-x86-64.so.2 --list /usr/bin/git push", false},
	} {
		if v := PreflightShell(p, tt.src); v.Blocked != tt.want || tt.want && v.Rule.Text != "git push" {
			t.Errorf("PreflightShell(%q) = %q, want blocked %v", tt.src, v.Message(), tt.want)
		}
	}
	argv := []string{"ld-linux-x86-64.so.2", "--library-path", "/lib", "/usr/bin/git", "push"}
	if v := PreflightArgv(p, argv); !v.Blocked || v.Rule.Text != "git push" {
		t.Errorf("PreflightArgv(%q) = %q, want git push blocked", argv, v.Message())
	}
}
