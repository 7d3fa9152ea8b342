package policy

import (
	"fmt"
	"path"
	"strings"
)

// Warning is one lint finding: a policy that loads but probably does not
// mean what its author thinks.
type Warning struct {
	Check string // short name of the check, such as "broad-allow"
	Key   string // the config key, when the finding is about one rule
	Value string // the rule, when there is one
	Where string // where the rule was written, when known
	Msg   string
}

func (w Warning) String() string {
	s := w.Msg
	if w.Key != "" {
		s = fmt.Sprintf("%s %q: %s", w.Key, w.Value, w.Msg)
	}
	if w.Where != "" {
		s += " (" + w.Where + ")"
	}
	return s
}

// CanarySecrets are files that no sensible policy lets a sandbox read or write.
var CanarySecrets = []string{"~/.ssh/id_rsa", "~/.aws/credentials", "/etc/shadow"}

// Lint checks a resolved policy as seen from working directory dir by a
// user whose home is home and whose PATH holds pathDirs (see PathDirs).
func Lint(r *Resolved, dir, home string, pathDirs ...string) []Warning {
	l := linter{r: r, dir: dir, home: home}
	if path.Clean(dir) == path.Clean(home) {
		l.add(Warning{Check: "home-workspace", Msg: "the working directory is your home directory, so \".\" in a rule means all of it: run fence from the project directory"})
	}
	fs := r.Config.Filesystem
	for _, key := range []string{"filesystem.allowRead", "filesystem.allowWrite"} {
		for _, p := range l.list(key) {
			if isTopLevel(p) {
				l.rule("broad-allow", key, p, "opens the whole filesystem: list the directories the command needs")
			}
		}
	}
	for _, key := range []string{"filesystem.allowRead", "filesystem.allowExecute", "filesystem.allowWrite", "filesystem.denyRead", "filesystem.denyWrite"} {
		for _, p := range l.list(key) {
			l.globShape(key, p)
		}
	}
	sshRule := l.sshWritable()
	for _, c := range CanarySecrets {
		secret := Expand(c, dir, home)
		// Reads are open everywhere unless defaultDenyRead, so only then
		// can an allow rule be what makes a secret readable.
		if rule, key := l.allows(secret, fs.AllowRead, fs.AllowExecute, fs.AllowWrite); fs.DefaultDenyRead && rule != "" && !l.denied(secret, fs.DenyRead) {
			l.rule("secret-readable", key, rule, fmt.Sprintf("makes the secret %s readable: narrow the rule or add %q to filesystem.denyRead", c, c))
		}
		if rule, _ := l.allows(secret, nil, nil, fs.AllowWrite); rule != "" && !l.denied(secret, fs.DenyRead, fs.DenyWrite) && !(rule == sshRule && Covers(Expand(SSHDir, dir, home), secret, false)) {
			l.rule("secret-writable", "filesystem.allowWrite", rule, fmt.Sprintf("makes the secret %s writable: narrow the rule or add %q to filesystem.denyWrite", c, c))
		}
	}
	for _, f := range r.Files {
		// A workspace rule covering the project's own config is the common
		// case, and fence write-protects that file anyway; a rule that
		// reaches a config elsewhere (the user config, a shared base) or
		// names the file itself is the mistake worth a warning.
		if rule, _ := l.allows(f, nil, nil, fs.AllowWrite); rule != "" && !(Covers(dir, f, false) && Covers(Expand(rule, dir, home), dir, false)) {
			l.rule("config-writable", "filesystem.allowWrite", rule, fmt.Sprintf("covers the config file %s: fence keeps config files read-only anyway, so narrow the rule", f))
		}
	}
	l.pathWritable(pathDirs)
	l.agentStateWritable()
	l.localOutboundWithoutPorts()
	l.upstreamUnused()
	return l.out
}

// SSHDir is the directory a run warns about when the policy lets the
// command write it.
const SSHDir = "~/.ssh"

// sshWritable warns when an allowWrite rule covers ~/.ssh itself and no
// deny rule does, and returns that rule ("" when none). fence keeps ssh's
// config, rc and authorized_keys read-only anyway; the keys and
// known_hosts beside them are what the rule opens.
func (l *linter) sshWritable() string {
	fs := l.r.Config.Filesystem
	dir := Expand(SSHDir, l.dir, l.home)
	rule, _ := l.allows(dir, nil, nil, fs.AllowWrite)
	if rule == "" || l.home == "" || l.denied(dir, fs.DenyRead, fs.DenyWrite) {
		return ""
	}
	l.rule("ssh-writable", "filesystem.allowWrite", rule, fmt.Sprintf("makes %s writable: the command can replace the keys and known_hosts that ssh trusts outside the sandbox; narrow the rule or add %q to filesystem.denyWrite", SSHDir, SSHDir))
	return rule
}

// pathWritable warns about each allowWrite rule that names a PATH
// directory itself, the one way fence leaves such a directory writable.
func (l *linter) pathWritable(pathDirs []string) {
	for _, d := range pathCandidates(Env{Home: l.home, PathDirs: pathDirs}) {
		for _, rule := range l.r.Config.Filesystem.AllowWrite {
			if p := Expand(rule, l.dir, l.home); !hasGlob(p) && path.Clean(p) == d.dir {
				l.rule("path-writable", "filesystem.allowWrite", rule, fmt.Sprintf("makes %s, %s, writable: %s", d.dir, d.why, pathDirHint))
			}
		}
	}
}

type linter struct {
	r         *Resolved
	dir, home string
	out       []Warning
}

func (l *linter) add(w Warning) { l.out = append(l.out, w) }

func (l *linter) rule(check, key, value, msg string) {
	w := Warning{Check: check, Key: key, Value: value, Msg: msg}
	if o, ok := l.r.Origin(key, value); ok {
		w.Where = o.String()
	}
	l.add(w)
}

func (l *linter) list(key string) []string {
	var out []string
	forEachList(&l.r.Config, func(k string, v []string) {
		if k == key {
			out = v
		}
	})
	return out
}

// globShape warns about a "**" that is not a whole segment. Braces need
// no warning: fence check and the sandbox match every alternative of
// "src/{a,b}".
func (l *linter) globShape(key, p string) {
	for _, seg := range strings.Split(p, "/") {
		if strings.Contains(seg, "**") && seg != "**" {
			l.rule("bare-doublestar", key, p, fmt.Sprintf("\"**\" spans directories only as a whole path segment; %q matches within one name, like \"*\": write \"**/\" on its own", seg))
			return
		}
	}
}

// allows returns the first allow rule, and its key, that covers p.
func (l *linter) allows(p string, read, exec, write []string) (rule, key string) {
	for _, g := range []struct {
		key   string
		rules []string
	}{{"filesystem.allowRead", read}, {"filesystem.allowExecute", exec}, {"filesystem.allowWrite", write}} {
		for _, r := range g.rules {
			if Covers(Expand(r, l.dir, l.home), p, false) {
				return r, g.key
			}
		}
	}
	return "", ""
}

func (l *linter) denied(p string, lists ...[]string) bool {
	for _, rules := range lists {
		for _, r := range rules {
			if Covers(Expand(r, l.dir, l.home), p, true) {
				return true
			}
		}
	}
	return false
}

func isTopLevel(p string) bool {
	switch strings.TrimRight(p, "/") {
	case "", "/**", "**", "/*", "**/*", "/**/*":
		return true
	}
	return false
}
