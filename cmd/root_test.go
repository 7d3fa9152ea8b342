package cmd

import (
	"io"
	"slices"
	"testing"
)

// TestSubcommandsWhole keeps runsCommand's list of subcommand names equal
// to the subcommands fence has: a name missing from it would make fence
// start a sandbox init for a subcommand that never runs one.
func TestSubcommandsWhole(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	slices.Sort(names)
	if !slices.Equal(names, subcommands) {
		t.Errorf("fence's subcommands are %q; runsCommand knows %q", names, subcommands)
	}
}

func TestRunsCommand(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"--", "true"}, true},
		{[]string{"-t", "code", "--", "make", "test"}, true},
		{[]string{"-c", "echo hi"}, true},
		{[]string{"--command=echo hi"}, true},
		{[]string{"-m", "--timeout", "1m", "--command", "make"}, true},
		{[]string{"--", "plan"}, true},          // a command named like a subcommand
		{[]string{"plan", "--", "true"}, false}, // the plan subcommand
		{[]string{"-t", "code", "check", "command", "git push"}, false},
		{[]string{"--keep-fd", "3", "--", "true"}, false}, // the init needs the descriptors
		{[]string{"--keep-fd=3", "--", "true"}, false},
		{[]string{"--version"}, false},
		{[]string{"config", "show"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := runsCommand(tt.args); got != tt.want {
			t.Errorf("runsCommand(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}
