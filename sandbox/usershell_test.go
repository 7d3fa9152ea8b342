package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveUserShell checks each way a $SHELL is refused, and the
// family a good one is read as.
func TestResolveUserShell(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/true\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bash, zsh, fish := file("bash", 0o755), file("zsh", 0o755), file("fish", 0o755)
	plain := file("dash", 0o644)
	unlisted := file("mksh", 0o755)
	sh := filepath.Join(dir, "sh")
	if err := os.Symlink(bash, sh); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "myshell")
	if err := os.Symlink(zsh, other); err != nil {
		t.Fatal(err)
	}
	// A link named bash that leads to fish runs fish.
	if err := os.Mkdir(filepath.Join(dir, "l"), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeBash := filepath.Join(dir, "l", "bash")
	if err := os.Symlink(fish, fakeBash); err != nil {
		t.Fatal(err)
	}
	versioned := file("zsh-5.9", 0o755)
	shells := file("shells", 0o644)
	if err := os.WriteFile(shells, []byte("# login shells\n"+strings.Join([]string{bash, zsh, fish, plain, sh, other, dir, fakeBash, versioned}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		shell, etc, family, err string
	}{
		{shell: bash, etc: shells, family: "bash"},
		{shell: zsh, etc: shells, family: "zsh"},
		{shell: sh, etc: shells, family: "sh"},                             // a link named sh to bash: bash in POSIX mode
		{shell: other, etc: shells, family: "zsh"},                         // a name of its own: the family of its target
		{shell: unlisted, etc: filepath.Join(dir, "none"), family: "mksh"}, // no /etc/shells: every shell is listed
		{shell: "", etc: shells, err: "$SHELL is not set"},
		{shell: "bin/bash", etc: shells, err: "is not an absolute path"},
		{shell: filepath.Join(dir, "missing"), etc: shells, err: "no such file"},
		{shell: dir, etc: shells, err: "is not a regular file"},
		{shell: plain, etc: shells, err: "is not executable"},
		{shell: unlisted, etc: shells, err: "is not listed in " + shells},
		{shell: fish, etc: shells, err: "is fish, whose syntax fence's preflight cannot read"},
		{shell: fakeBash, etc: shells, err: "is fish, whose syntax fence's preflight cannot read"},
		{shell: versioned, etc: shells, family: "zsh"},
	}
	for _, tt := range tests {
		got, err := ResolveUserShell(tt.shell, tt.etc, true)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ResolveUserShell(%q) = %v, want an error with %q", tt.shell, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("ResolveUserShell(%q): %v", tt.shell, err)
		case tt.err == "" && (got.Family != tt.family || got.Path != tt.shell || !got.Login):
			t.Errorf("ResolveUserShell(%q) = %+v, want family %s, login", tt.shell, got, tt.family)
		}
	}
}

// TestUserShellArgv is the command line for each shell and -l.
func TestUserShellArgv(t *testing.T) {
	if got := (UserShell{Path: "/bin/zsh", Login: true}).Argv("ls"); strings.Join(got, " ") != "/bin/zsh -l -c ls" {
		t.Errorf("Argv = %q", got)
	}
	if got := (UserShell{Path: "/bin/dash"}).Argv("ls"); strings.Join(got, " ") != "/bin/dash -c ls" {
		t.Errorf("Argv = %q", got)
	}
}

// TestPreflightUserShell is the verdict on a line as each family runs it:
// "" allowed, a rule blocked by it, "dynamic" blocked as unseen (only
// under command.dynamic "deny").
func TestPreflightUserShell(t *testing.T) {
	tests := []struct {
		src, family, shell, allow, deny string
	}{
		{"git push", "zsh", "/bin/zsh", "git push", "git push"},
		{"ls", "dash", "/bin/dash", "", ""},
		{"alias p='git push'; p", "dash", "/bin/dash", "git push", "git push"},
		{"alias p=git\np push", "dash", "/bin/dash", "", "dynamic"},
		{"alias p=git\np push", "sh", "/bin/sh", "", "dynamic"},
		{"alias p=git\np push", "bash", "/bin/bash", "", ""}, // bash -c expands no aliases
		{"alias", "ksh", "/bin/ksh", "", "dynamic"},
		{"=git push", "zsh", "/bin/zsh", "", "dynamic"},
		{"env =git push", "zsh", "/bin/zsh", "", "dynamic"},
		{"=git push", "dash", "/bin/dash", "", ""},      // a command named "=git" there
		{"ls", "bash", "/usr/bin/sudo", "sudo", "sudo"}, // the shell itself meets a rule
		// a nested shell's string is judged as that shell runs it
		{"sh -c 'alias p=git\np push'", "bash", "/bin/bash", "", "dynamic"},
		{"dash -c \"alias p='git push'; p\"", "bash", "/bin/bash", "git push", "git push"},
		{"bash -c 'alias p=git\np push'", "bash", "/bin/bash", "", ""},
		{"zsh -c '=git push'", "bash", "/bin/bash", "", "dynamic"},
		{"fish -c 'git push'", "bash", "/bin/bash", "", "dynamic"},
		{"fish -n x.fish", "bash", "/bin/bash", "", ""},
		{"bash -c \"sh -c 'alias p=git\np push'\"", "bash", "/bin/bash", "", "dynamic"},
	}
	for _, tt := range tests {
		for dynamic, want := range map[string]string{"allow": tt.allow, "deny": tt.deny} {
			v := PreflightUserShell(commandPolicy(dynamic), tt.src, UserShell{Path: tt.shell, Family: tt.family})
			got := ""
			switch {
			case v.Rule != nil:
				got = v.Rule.Text
			case v.Blocked:
				got = "dynamic"
			}
			if got != want {
				t.Errorf("PreflightUserShell(%q, %s) under dynamic %s = %q (%s), want %q", tt.src, tt.family, dynamic, got, v.Message(), want)
			}
		}
	}
}

// BenchmarkPreflightUserShell is the cost of judging a typical line as
// each family runs it: bash adds one argv judgment to PreflightShell,
// the others a second parse for aliases and =name words.
func BenchmarkPreflightUserShell(b *testing.B) {
	p := commandPolicy("deny")
	const line = `cd src && go test ./... 2>&1 | tee out.log; git status --short`
	for _, s := range []UserShell{{Path: "/bin/bash", Family: "bash"}, {Path: "/bin/dash", Family: "dash"}, {Path: "/bin/zsh", Family: "zsh"}} {
		b.Run(s.Family, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if v := PreflightUserShell(p, line, s); v.Blocked {
					b.Fatal(v.Message())
				}
			}
		})
	}
	b.Run("PreflightShell", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			PreflightShell(p, line)
		}
	})
}
