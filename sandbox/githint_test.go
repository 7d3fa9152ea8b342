package sandbox

import "testing"

func TestWritesGitConfig(t *testing.T) {
	tests := []struct {
		argv  []string
		shell string
		want  bool
	}{
		{nil, `git config user.name x`, true},
		{nil, `cd sub && git -C .. config --unset core.editor`, true},
		{nil, `git config set core.editor vi`, true},
		{nil, `git config --get user.name`, false},
		{nil, `git config user.name`, false},
		{nil, `git config --global user.name x`, false},
		{nil, `git config -l`, false},
		{nil, `git remote add origin https://example.invalid/x.git`, true},
		{nil, `git remote -v`, false},
		{nil, `make && git branch -m old new`, true},
		{nil, `git branch topic`, false},
		{nil, `git push -u origin main`, true},
		{nil, `git push origin main`, false},
		{nil, `git branch --set-upstream-to=origin/main`, true},
		{nil, `git submodule add ../lib`, true},
		{nil, `git commit -m "config remote add"`, false},
		{[]string{"/usr/bin/git", "-c", "x=y", "remote", "rename", "a", "b"}, "", true},
		{[]string{"git", "status"}, "", false},
		{[]string{"echo", "git", "config", "a", "b"}, "", true}, // words, not syntax: a hint may be spurious
	}
	for _, tt := range tests {
		if got := WritesGitConfig(tt.argv, tt.shell); got != tt.want {
			t.Errorf("WritesGitConfig(%q, %q) = %v, want %v", tt.argv, tt.shell, got, tt.want)
		}
	}
}
