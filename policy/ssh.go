package policy

import (
	"path"
	"strings"
)

// SSHPolicy is the compiled ssh section. It applies only when the section
// says something (Enabled).
type SSHPolicy struct {
	Enabled         bool          `json:"enabled,omitempty"`
	AllowedHosts    []string      `json:"allowedHosts,omitempty"`
	DeniedHosts     []string      `json:"deniedHosts,omitempty"`
	AllowedCommands []CommandRule `json:"allowedCommands,omitempty"`
	DeniedCommands  []CommandRule `json:"deniedCommands,omitempty"`
	AllowAll        bool          `json:"allowAllCommands,omitempty"`
	InheritDeny     bool          `json:"inheritDeny,omitempty"`
}

func compileSSH(s SSH, origin func(string) func(string) string) SSHPolicy {
	return SSHPolicy{
		Enabled:         len(s.AllowedHosts)+len(s.DeniedHosts)+len(s.AllowedCommands)+len(s.DeniedCommands) > 0 || s.AllowAllCommands || s.InheritDeny,
		AllowedHosts:    s.AllowedHosts,
		DeniedHosts:     s.DeniedHosts,
		AllowedCommands: commandRules(s.AllowedCommands, origin("ssh.allowedCommands")),
		DeniedCommands:  commandRules(s.DeniedCommands, origin("ssh.deniedCommands")),
		AllowAll:        s.AllowAllCommands,
		InheritDeny:     s.InheritDeny,
	}
}

// DecideSSHHost judges an ssh destination host: deniedHosts first, then
// allowedHosts. Patterns are ssh's (*, ?), without regard to case. It
// returns the reason when the host is refused.
func (s *SSHPolicy) DecideSSHHost(host string) (ok bool, reason string) {
	host = strings.ToLower(host)
	if p, hit := matchHost(s.DeniedHosts, host); hit {
		return false, `host ` + host + ` matches ssh.deniedHosts "` + p + `"`
	}
	if _, hit := matchHost(s.AllowedHosts, host); hit {
		return true, ""
	}
	return false, `host ` + host + ` is not in ssh.allowedHosts`
}

// SSHCommandDenied reports whether ssh.deniedCommands refuses a remote
// command's argv, and which rule.
func (s *SSHPolicy) SSHCommandDenied(argv []string) (denied bool, reason string) {
	if len(argv) == 0 {
		return false, ""
	}
	name := path.Base(argv[0])
	for i := range s.DeniedCommands {
		if r := &s.DeniedCommands[i]; r.match(name, argv[1:]) {
			return true, `matches ssh.deniedCommands "` + r.Text + `"`
		}
	}
	return false, ""
}

// SSHCommandAllowed reports whether allowAllCommands or allowedCommands
// lets a remote command's argv run. The order of the checks is the
// caller's: deniedCommands, then command.deny with inheritDeny, then this.
func (s *SSHPolicy) SSHCommandAllowed(argv []string) (ok bool, reason string) {
	if s.AllowAll || len(argv) == 0 {
		return true, ""
	}
	name := path.Base(argv[0])
	for i := range s.AllowedCommands {
		if s.AllowedCommands[i].match(name, argv[1:]) {
			return true, ""
		}
	}
	return false, "the remote command is not in ssh.allowedCommands (or set ssh.allowAllCommands)"
}

func matchHost(patterns []string, host string) (string, bool) {
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return p, true
		}
	}
	return "", false
}
