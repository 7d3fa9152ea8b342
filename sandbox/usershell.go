package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/syntax"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// UserShell is the shell `--shell user` runs a -c string through: the
// caller's $SHELL, checked by ResolveUserShell.
type UserShell struct {
	Path   string // $SHELL as given, absolute
	Family string // bash, sh, dash, ash, ksh, mksh or zsh (see shellFamilies)
	Login  bool   // --shell-login: run it with -l
}

// shellFamilies maps a shell's file name to the family whose -c strings
// preflight reads. Preflight parses every one of them as bash, as it
// does a nested `zsh -c` today; fish, csh, tcsh, nushell and the like
// have a syntax of their own (fish's single quotes take \', csh's
// history and quoting differ), so a line bash reads as a string could
// run a denied command there, and they are refused.
var shellFamilies = map[string]string{
	"bash": "bash", "sh": "sh", "dash": "dash", "ash": "ash", "busybox": "ash",
	"ksh": "ksh", "ksh93": "ksh", "mksh": "mksh", "lksh": "mksh", "zsh": "zsh",
}

// EtcShells is the list of login shells $SHELL must be on, when the file
// exists.
const EtcShells = "/etc/shells"

// ResolveUserShell checks shell ($SHELL) for `--shell user`: an absolute
// path to an executable regular file (links followed), listed in
// etcShells when that file exists, of a family preflight can read. The
// error says which of these failed.
func ResolveUserShell(shell, etcShells string, login bool) (UserShell, error) {
	if shell == "" {
		return UserShell{}, errors.New("--shell user: $SHELL is not set")
	}
	if !filepath.IsAbs(shell) {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q is not an absolute path", shell)
	}
	resolved, err := inputs.EvalSymlinks(shell)
	if err != nil {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q: %w", shell, err)
	}
	fi, err := inputs.Stat(resolved)
	if err != nil {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q: %w", shell, err)
	}
	if !fi.Mode().IsRegular() {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q is not a regular file (%s)", shell, fi.Mode().Type())
	}
	if err := inputs.Access(resolved, unix.X_OK); err != nil || fi.Mode().Perm()&0o111 == 0 {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q is not executable", shell)
	}
	if err := checkListed(shell, resolved, etcShells); err != nil {
		return UserShell{}, err
	}
	family, ok := shellFamily(shell, resolved)
	if !ok {
		return UserShell{}, fmt.Errorf("--shell user: $SHELL %q is %s, whose syntax fence's preflight cannot read (it parses sh, bash, dash, ash, ksh, mksh and zsh command lines), so command.deny could not be judged the way that shell runs the line; use --shell default (bash) or a POSIX-family $SHELL", shell, filepath.Base(resolved))
	}
	return UserShell{Path: shell, Family: family, Login: login}, nil
}

// shellFamily is the family of the shell that runs: the program its links
// lead to (a link named bash that leads to fish runs fish), its name's
// version suffix aside (zsh-5.9); bash run by the name sh runs as sh
// does, in POSIX mode.
func shellFamily(shell, resolved string) (string, bool) {
	name := filepath.Base(resolved)
	if i := strings.IndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789.") == "" {
		name = name[:i]
	}
	family, ok := shellFamilies[name]
	if ok && family == "bash" && shellFamilies[filepath.Base(shell)] == "sh" {
		family = "sh"
	}
	return family, ok
}

// checkListed refuses a shell etcShells does not list (by the path given
// or the one its links lead to); no such file lists every shell.
func checkListed(shell, resolved, etcShells string) error {
	data, err := inputs.ReadFile(etcShells)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--shell user: read %q: %w", etcShells, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && (line == shell || line == resolved) {
			return nil
		}
	}
	return fmt.Errorf("--shell user: $SHELL %q is not listed in %s, so it is not a login shell of this system", shell, etcShells)
}

// Argv is the command line that runs src through the shell.
func (s UserShell) Argv(src string) []string {
	if s.Login {
		return []string{s.Path, "-l", "-c", src}
	}
	return []string{s.Path, "-c", src}
}

// PreflightUserShell judges src as `--shell user` runs it: as
// PreflightShell does (every family is parsed as bash), then the shell
// itself as a command (a deny rule may name it), then what that family
// does that bash -c does not. Every shell but bash expands aliases in a
// -c string (bash does as sh, in POSIX mode), so an alias defined on the
// line is a command name set at run time: its value is judged as a
// command line, and the definition is blocked under command.dynamic
// "deny". zsh replaces a word "=name" by the path of the program name,
// which is judged the same way.
func PreflightUserShell(p *policy.Policy, src string, s UserShell) Verdict {
	if v := PreflightShell(p, src); v.Blocked {
		return v
	}
	if v := PreflightArgv(p, []string{s.Path}); v.Blocked {
		return v
	}
	if s.Family == "bash" {
		return Verdict{}
	}
	return shellSpecific(p, src, s.Family)
}

// shellSpecific judges src for what family does that bash -c does not
// (see PreflightUserShell); PreflightShell has judged the rest. A nested
// `sh -c` or `zsh -c` string is judged so as well.
func shellSpecific(p *policy.Policy, src, family string) Verdict {
	parser := parsers.Get().(*syntax.Parser)
	file, err := parser.Parse(strings.NewReader(src), "")
	parsers.Put(parser)
	if err != nil {
		return Verdict{} // PreflightShell has judged what it cannot read
	}
	var v Verdict
	syntax.Walk(file, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && !v.Blocked {
			v = judgeShellSpecific(p, call, family)
		}
		return !v.Blocked
	})
	return v
}

// judgeShellSpecific judges one simple command for what s's family does
// with it beyond bash: alias definitions, and zsh's =name words.
func judgeShellSpecific(p *policy.Policy, call *syntax.CallExpr, family string) Verdict {
	if len(call.Args) == 0 {
		return Verdict{}
	}
	if family == "zsh" && slices.ContainsFunc(call.Args, func(w *syntax.Word) bool { lit := w.Lit(); return len(lit) > 1 && lit[0] == '=' }) {
		return dynamicVerdict(p, printWords(call.Args), "a =name word, which zsh replaces with the path of a program")
	}
	if literalWord(call.Args[0]) != (word{text: "alias", literal: true}) {
		return Verdict{}
	}
	for _, a := range call.Args[1:] {
		w := literalWord(a)
		_, value, ok := strings.Cut(w.text, "=")
		if !w.literal || !ok {
			continue
		}
		if v := PreflightShell(p, value); v.Blocked {
			return v
		}
	}
	return dynamicVerdict(p, printWords(call.Args), "an alias defined on the line, which "+family+" expands in a -c string")
}

// dynamicVerdict is preflight's answer to what it cannot see through:
// blocked only under command.dynamic "deny".
func dynamicVerdict(p *policy.Policy, command, why string) Verdict {
	if p.CommandDynamic != "deny" {
		return Verdict{}
	}
	return Verdict{Blocked: true, Command: command, Dynamic: why}
}
