//go:build linux

package linux

import (
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestShebangArgv: the interpreter and argv the kernel builds from a
// script's first line (fs/binfmt_script.c), for ./s run with argv
// ["s", "a", "b"].
func TestShebangArgv(t *testing.T) {
	long := "#!/usr/bin/" + strings.Repeat("x", 300)
	tests := []struct {
		head string
		want []string // nil: not run as a script
	}{
		{"#!/usr/bin/git push\n", []string{"/usr/bin/git", "push", "./s", "a", "b"}},
		{"#!/bin/sh\necho hi\n", []string{"/bin/sh", "./s", "a", "b"}},
		{"#! \t/usr/bin/git \t push  origin \t\nx", []string{"/usr/bin/git", "push  origin", "./s", "a", "b"}},
		{"#!/usr/bin/env -S git push\n", []string{"/usr/bin/env", "-S git push", "./s", "a", "b"}},
		{"#!/usr/bin/git push", []string{"/usr/bin/git", "push", "./s", "a", "b"}},
		{"#!/usr/bin/git push  ", []string{"/usr/bin/git", "push  ", "./s", "a", "b"}}, // no newline: not trimmed
		{"#!/usr/bin/git\x00push\n", []string{"/usr/bin/git", "./s", "a", "b"}},
		{"#!/usr/bin/git pu\x00sh\n", []string{"/usr/bin/git", "pu", "./s", "a", "b"}},
		{"#!git push\r\n", []string{"git", "push\r", "./s", "a", "b"}},
		{"#!/usr/bin/git " + strings.Repeat("p", 300), []string{"/usr/bin/git", strings.Repeat("p", 255-len("#!/usr/bin/git ")), "./s", "a", "b"}},
		{long, nil},        // the interpreter's path cut short: ENOEXEC
		{"#!   \t\n", nil}, // no interpreter
		{"#!" + strings.Repeat(" ", 300), nil},
		{"#\n", nil},
		{"\x7fELF", nil},
		{"", nil},
	}
	for _, tt := range tests {
		interp, got, ok := shebangArgv([]byte(tt.head), "./s", []string{"s", "a", "b"})
		if !ok {
			got = nil
		}
		if !slices.Equal(got, tt.want) || ok && interp != got[0] {
			t.Errorf("shebangArgv(%q) = %q, %q, %v, want %q", tt.head, interp, got, ok, tt.want)
		}
	}
}

// TestJudgeAsLoader: a loader known only by its name's pattern is
// unwrapped like one known by name.
func TestJudgeAsLoader(t *testing.T) {
	p := policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"git push"}}}, policy.Env{Dir: "/w", Home: "/h"})
	for _, prog := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-musl-newarch.so.1", "/lib/x86_64-linux-gnu/ld-2.31.so"} {
		if v := judgeAs(p, prog, []string{"x", "--preload", "y.so", "/usr/bin/git", "push"}); !v.Blocked {
			t.Errorf("judgeAs(%q, ... git push) not blocked", prog)
		}
	}
	if v := judgeAs(p, "/usr/bin/git", []string{"ls", "push"}); !v.Blocked {
		t.Errorf("judgeAs(git, [ls push]) not blocked: argv[0] is not the program")
	}
}

func TestProcSelf(t *testing.T) {
	for p, want := range map[string]string{
		"/proc/self/fd/3": "fd/3", "/proc/thread-self/exe": "exe", "/dev/fd/4": "fd/4",
		"/dev/fd/4/x": "fd/4/x", "/dev/stdin": "fd/0", "/usr/bin/git": "", "/proc/self/": "", "/dev/fd/": "",
	} {
		if got := procSelf(p); got != want {
			t.Errorf("procSelf(%q) = %q, want %q", p, got, want)
		}
	}
}
