package sandbox

import (
	"net/url"
	"strings"
)

// sshValueOptions are ssh's options that take a value.
const sshValueOptions = "BbcDEeFIiJLlmOopQRSWw"

// sshArgs splits ssh's arguments into the destination host and the
// remote command. ok is false when there is no destination (ssh -V).
func sshArgs(args []word) (host string, command []word, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if !args[i].literal {
			return "", nil, false
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			// -p22 carries its value; -p 22 takes the next argument.
			if k := strings.IndexAny(a[1:], sshValueOptions); k >= 0 && k == len(a)-2 {
				i++
			}
			continue
		}
		return sshHost(a), args[i+1:], true
	}
	return "", nil, false
}

// sshHost is the host of [user@]host or ssh://[user@]host[:port].
func sshHost(dest string) string {
	if u, err := url.Parse(dest); err == nil && u.Scheme == "ssh" {
		return u.Hostname()
	}
	if _, h, ok := strings.Cut(dest, "@"); ok {
		return h
	}
	return dest
}

// ssh judges an ssh command: its host, and its remote command.
func (f *preflight) ssh(args []word, text lazyText, depth int) Verdict {
	s := &f.pol.SSH
	if !s.Enabled {
		return Verdict{}
	}
	host, command, ok := sshArgs(args)
	if !ok {
		return f.dynamic(text, "an ssh destination built at run time")
	}
	if allowed, reason := s.DecideSSHHost(host); !allowed {
		return Verdict{Blocked: true, Command: text.String(), Reason: reason}
	}
	if len(command) == 0 {
		return Verdict{} // an interactive session on an allowed host
	}
	remote, literal := joinLiteral(command)
	if !literal {
		return f.dynamic(text, "a remote command built at run time")
	}
	// The remote command is a shell string on the other host: each of its
	// simple commands meets the ssh command rules.
	return (&preflight{pol: f.pol, remote: s}).shell(remote, text, depth+1)
}

// gitSSHHosts returns the hosts of the ssh remotes written out in a git
// command line: scp-like user@host:path and ssh:// URLs. Remotes named in
// the repository's config are not visible here; the network rules still
// apply to them.
func gitSSHHosts(args []word) []string {
	var hosts []string
	for _, a := range args {
		if !a.literal {
			continue
		}
		if u, err := url.Parse(a.text); err == nil && (u.Scheme == "ssh" || u.Scheme == "git+ssh") {
			hosts = append(hosts, u.Hostname())
			continue
		}
		at := strings.Index(a.text, "@")
		colon := strings.Index(a.text, ":")
		if at > 0 && colon > at && !strings.Contains(a.text[:colon], "/") {
			hosts = append(hosts, a.text[at+1:colon])
		}
	}
	return hosts
}

// gitRemotes judges the ssh hosts of a git command line.
func (f *preflight) gitRemotes(args []word, text lazyText) Verdict {
	if !f.pol.SSH.Enabled {
		return Verdict{}
	}
	for _, h := range gitSSHHosts(args) {
		if ok, reason := f.pol.SSH.DecideSSHHost(h); !ok {
			return Verdict{Blocked: true, Command: text.String(), Reason: reason + " (a git remote over ssh)"}
		}
	}
	return Verdict{}
}
