package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
)

// shellFlags are --shell and --shell-login: which shell runs a -c
// string, and whether as a login shell.
type shellFlags struct {
	mode  string
	login bool
}

func (s *shellFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.mode, "shell", "default", "the shell that runs -c: default (bash, else sh) or user (your $SHELL: sh, bash, dash, ash, ksh, mksh or zsh, listed in /etc/shells)")
	f.BoolVar(&s.login, "shell-login", false, "run the -c shell as a login shell (-l), which reads your profile inside the sandbox")
}

// resolve checks the flags against the command and returns the shell
// that runs src, or nil for the plan's own (bash, else sh) without -l.
func (s *shellFlags) resolve(src string, argv []string) (*sandbox.UserShell, error) {
	if s.mode != "default" && s.mode != "user" {
		return nil, fmt.Errorf("--shell %q: want default or user", s.mode)
	}
	if s.mode == "default" && !s.login {
		return nil, nil
	}
	if src == "" {
		return nil, errors.New("--shell and --shell-login choose the shell of a -c string; a command given as argv runs without a shell (give it as -c 'string', or run the shell yourself)")
	}
	if s.mode == "default" {
		us := &sandbox.UserShell{Path: defaultShell(), Family: "bash", Login: true}
		if us.Path != "/bin/bash" && us.Path != "/usr/bin/bash" {
			us.Family = "sh"
		}
		return us, nil
	}
	us, err := sandbox.ResolveUserShell(os.Getenv("SHELL"), sandbox.EtcShells, s.login)
	if err != nil {
		return nil, err
	}
	return &us, nil
}

// defaultShell is the shell the plan runs -c with (sandbox's shellPath):
// bash, else sh.
func defaultShell() string {
	for _, sh := range []string{"/bin/bash", "/usr/bin/bash"} {
		if _, err := inputs.Stat(sh); err == nil {
			return sh
		}
	}
	return "/bin/sh"
}

// preflightRun judges the command line as the run will start it:
// through us when it is set, else through the default shell, which is
// sh where there is no bash (and expands aliases then).
func preflightRun(pol *policy.Policy, argv []string, src string, us *sandbox.UserShell) sandbox.Verdict {
	if us == nil && src != "" {
		if sh := defaultShell(); sh == "/bin/sh" {
			us = &sandbox.UserShell{Path: sh, Family: "sh"}
		}
	}
	if us != nil {
		return sandbox.PreflightUserShell(pol, src, *us)
	}
	return preflight(pol, argv, src)
}
