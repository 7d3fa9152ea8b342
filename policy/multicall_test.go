package policy

import "testing"

// TestGitForms: a rule on git push holds for every name and form a
// command line can give push's job, and not for other subcommands.
func TestGitForms(t *testing.T) {
	p := Compile(Config{Command: Command{Deny: []string{"git push"}}}, Env{Dir: "/w", Home: "/h"})
	for _, tt := range []struct {
		argv    []string
		blocked bool
	}{
		{[]string{"git", "push"}, true},
		{[]string{"git-push", "origin"}, true},
		{[]string{"/usr/lib/git-core/git-push", "origin", "main"}, true},
		{[]string{"git", "send-pack", "origin"}, true},
		{[]string{"/usr/lib/git-core/git-send-pack", "x"}, true},
		{[]string{"git", "http-push", "x"}, true},
		{[]string{"git", "-C", "/w", "-c", "alias.x=push", "x", "origin"}, true},
		{[]string{"git", "-c", "alias.p=push --force", "p"}, true},
		{[]string{"git", "-c", "alias.s=send-pack", "s"}, true},
		{[]string{"git", "-c", "alias.y=!git push", "y"}, true},
		{[]string{"git", "-c", "ALIAS.x=push", "x"}, true},
		{[]string{"git", "-c", "alias.P=push", "p"}, true},
		{[]string{"git", "-c", "alias.x=push", "X"}, true},
		{[]string{"git", "-c", `alias.x="push"`, "x"}, true},
		{[]string{"git", "-c", "alias.x=y", "-c", "alias.y=push --force", "x"}, true},
		{[]string{"git", "-c", `alias.x=!sh -c "git push"`, "x"}, true},
		{[]string{"git", "-c", "alias.x=!env A=1 git push", "x"}, true},
		{[]string{"git", "-c", `alias.x=!"git" push`, "x"}, true},
		{[]string{"git", "-c", "help.autocorrect=immediate", "psuh"}, true},
		{[]string{"git", "-c", "help.autoCorrect=1", "puhs", "origin"}, true},
		{[]string{"git", "-c", "help.autocorrect=0", "psuh"}, false},
		{[]string{"git", "psuh"}, false}, // git says it is no command
		{[]string{"git", "-c", "alias.x=x", "x"}, false},
		{[]string{"git", "--git-dir", "/w/.git", "push"}, true},
		{[]string{"git", "status"}, false},
		{[]string{"git", "-c", "alias.x=push", "status"}, false},
		{[]string{"git", "-c", "alias.s=status", "s"}, false},
		{[]string{"git", "fetch-pack"}, false},
		{[]string{"git", "log", "--grep", "push"}, false},
		{[]string{"git-lfs", "pull"}, false},
		{[]string{"git-"}, false},
		{[]string{"git", "-c"}, false},
	} {
		if d := p.DecideCommand(tt.argv); d.Allowed == tt.blocked {
			t.Errorf("DecideCommand(%q) allowed %v, want blocked %v", tt.argv, d.Allowed, tt.blocked)
		}
	}
}

// TestMultiCallForms: an applet of a multi-call binary is judged as the
// command it runs.
func TestMultiCallForms(t *testing.T) {
	p := Compile(Config{Command: Command{Deny: []string{"shred", "rm -rf"}}}, Env{Dir: "/w", Home: "/h"})
	for _, tt := range []struct {
		argv    []string
		blocked bool
	}{
		{[]string{"coreutils", "--coreutils-prog=shred", "f"}, true},
		{[]string{"/usr/bin/coreutils", "--coreutils-prog=rm", "-rf", "/"}, true},
		{[]string{"toybox", "shred", "f"}, true},
		{[]string{"coreutils", "--coreutils-prog=ls"}, false},
		{[]string{"coreutils", "--help"}, false},
		{[]string{"toybox", "--help"}, false},
	} {
		if d := p.DecideCommand(tt.argv); d.Allowed == tt.blocked {
			t.Errorf("DecideCommand(%q) allowed %v, want blocked %v", tt.argv, d.Allowed, tt.blocked)
		}
	}
}
