package policy

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// network.defaultAction says what becomes of a host that neither
// network.allowedDomains nor network.deniedDomains names: "deny" (the
// default) refuses it, "proxy" forwards it to network.upstreamProxy, an
// HTTP proxy of the user's (mitmproxy, a corporate proxy). deniedDomains
// and the address rules still come first: a denied name is never
// forwarded, nor a name that resolves to the host's loopback, the
// metadata service or a private range the policy does not open.
const (
	DefaultActionDeny  = "deny"
	DefaultActionProxy = "proxy"
)

// DefaultActions are the values network.defaultAction takes.
var DefaultActions = []string{DefaultActionDeny, DefaultActionProxy}

// UpstreamProxy is network.upstreamProxy as the proxies use it.
type UpstreamProxy struct {
	// Addr is the proxy's host:port.
	Addr string `json:"addr"`
	// Authorization is the Proxy-Authorization value ("Basic …") the
	// URL's user name and password make, empty without them. It never
	// prints: not in JSON, not in a decision, not in an error.
	Authorization string `json:"-"`
}

// URL is the proxy's URL without its credentials, for messages.
func (u *UpstreamProxy) URL() string { return "http://" + u.Addr }

// ParseUpstreamProxy reads a network.upstreamProxy value: an http:// URL
// with a host and a port, optionally with a user name and password
// (sent to the proxy as Basic Proxy-Authorization), and nothing else.
func ParseUpstreamProxy(raw string) (*UpstreamProxy, error) {
	if problem := checkUpstreamProxy(raw); problem != "" {
		return nil, fmt.Errorf("network.upstreamProxy %q %s", RedactProxyURL(raw), problem)
	}
	u, _ := url.Parse(raw)
	up := &UpstreamProxy{Addr: net.JoinHostPort(hostOf(u), u.Port())}
	if u.User != nil {
		pass, _ := u.User.Password()
		up.Authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	return up, nil
}

// hostOf is u's host, normalised (an address in its canonical form).
func hostOf(u *url.URL) string {
	if h, err := NormalizeHost(u.Hostname()); err == nil {
		return h
	}
	return u.Hostname()
}

// RedactProxyURL is raw with whatever stands before an "@" hidden, so
// that a proxy URL can be printed without its credentials, even when it
// does not parse.
func RedactProxyURL(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return raw[:start] + "***" + raw[at:]
}

// checkUpstreamProxy says what is wrong with a network.upstreamProxy
// value, never quoting it (it may hold a password).
func checkUpstreamProxy(raw string) string {
	const want = "want http://HOST:PORT, such as \"http://127.0.0.1:8080\""
	if strings.TrimSpace(raw) == "" {
		return "is empty: " + want
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return "holds a space or a control character: " + want
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Opaque != "" || !strings.Contains(raw, "://"):
		return "is not a URL: " + want
	case u.Scheme == "https":
		return "is an https:// proxy, which fence does not speak: fence talks to the upstream proxy in plain HTTP (an https site still goes through it as a TLS tunnel, end to end); " + want
	case u.Scheme != "http":
		return fmt.Sprintf("has the scheme %q: fence forwards only to an HTTP proxy; %s", u.Scheme, want)
	case u.Hostname() == "":
		return "has no host: " + want
	case u.Port() == "":
		return "has no port: write it, as in \"http://127.0.0.1:8080\" (fence assumes none)"
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "has a path, query or fragment, which a proxy URL cannot use: " + want
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
		return "has a port out of range: want 1 to 65535"
	}
	if _, err := netip.ParseAddr(u.Hostname()); err != nil {
		if problem := domainShape(u.Hostname()); problem != "" || strings.Contains(u.Hostname(), "*") {
			return "has a host that is not a host name or an IP address: " + want
		}
	}
	if u.User != nil && strings.Contains(u.User.Username(), ":") {
		return "has a user name with a \":\", which Basic proxy authentication cannot carry"
	}
	return ""
}

// checkDefaultAction accepts the values of network.defaultAction.
func checkDefaultAction(v string) string {
	if slices.Contains(DefaultActions, v) {
		return ""
	}
	return fmt.Sprintf("%q is not an action: want %q (refuse hosts no domain rule names, the default) or %q (forward them to network.upstreamProxy)", v, DefaultActionDeny, DefaultActionProxy)
}

// compileUpstream is where p forwards the hosts no domain rule names:
// nil unless defaultAction is "proxy" with a valid upstreamProxy, and
// nil under --no-network.
func compileUpstream(n Network, env Env) *UpstreamProxy {
	if n.DefaultAction != DefaultActionProxy || env.NoNetwork {
		return nil
	}
	u, err := ParseUpstreamProxy(n.UpstreamProxy)
	if err != nil {
		return nil // the loader has refused it already; fail closed
	}
	return u
}

// forwarded is the decision for host h, which no domain rule names,
// under defaultAction "proxy".
func (p *Policy) forwarded(h string) NetDecision {
	return NetDecision{Allowed: true, Host: h, Rule: `network.defaultAction "proxy"`, Key: "network.defaultAction", Pattern: DefaultActionProxy,
		Reason: "forwarded to the upstream proxy " + p.Upstream.URL(), Upstream: p.Upstream.Addr}
}

// noteDefaultAction remembers the file nearest the root of the chain
// that sets network.defaultAction (the one whose value the merge keeps)
// and where it set it, for checkUpstream and for decisions' sources.
func (l *loader) noteDefaultAction(src Source, p *parsed) {
	pos, set := p.pos["network.defaultAction"]
	if !set {
		return
	}
	l.origins["network.defaultAction\x00"+p.cfg.Network.DefaultAction] = Origin{Source: src, Pos: pos}
	if l.defaultActionFrom == nil {
		l.defaultActionFrom = p
	}
}

// KeyUpstreamCredentials is the rule that keeps a config file holding
// the upstream proxy's user name and password unreadable inside the
// sandbox: the command could otherwise read the password and use it.
const KeyUpstreamCredentials = "mandatory.upstreamCredentials"

// noteUpstreamCredentials remembers a file of the chain whose
// network.upstreamProxy carries a user name or password.
func (l *loader) noteUpstreamCredentials(src Source, p *parsed) {
	if src.Path == "" || !proxyURLHasCredentials(p.cfg.Network.UpstreamProxy) || slices.Contains(l.credentialFiles, src.Path) {
		return
	}
	l.credentialFiles = append(l.credentialFiles, src.Path)
}

// proxyURLHasCredentials says whether raw names a user (with or without
// a password) before its host, parsed or not: an unparsable URL with an
// "@" is counted, to fail closed.
func proxyURLHasCredentials(raw string) bool {
	if u, err := url.Parse(raw); err == nil {
		return u.User != nil
	}
	return strings.Contains(raw, "@")
}

// upstreamCredentialRules deny reading the config files that hold the
// upstream proxy's credentials.
func upstreamCredentialRules(env Env, exp expander) []Rule {
	var out []Rule
	for _, f := range env.UpstreamCredentialFiles {
		r := exp.rule(f, "always protected: holds network.upstreamProxy's credentials", false)
		r.Key, r.Source = KeyUpstreamCredentials, "fence (always protected)"
		out = append(out, r)
	}
	return out
}

// checkUpstream refuses a merged config whose defaultAction is "proxy"
// with no upstreamProxy to forward to, pointing at the file that asked.
func (l *loader) checkUpstream(c Config) error {
	if c.Network.DefaultAction != DefaultActionProxy || c.Network.UpstreamProxy != "" || l.defaultActionFrom == nil {
		return nil
	}
	return l.defaultActionFrom.errorf("network.defaultAction", "is %q, but no network.upstreamProxy is set (in this file or any it extends or is extended by): name the proxy to forward to, as in \"upstreamProxy\": \"http://127.0.0.1:8080\", or set %q", DefaultActionProxy, DefaultActionDeny)
}

// checkUpstreamKeys checks network.defaultAction and
// network.upstreamProxy in one file, and says which key is wrong.
func (p *parsed) checkUpstreamKeys() (key, problem string) {
	n := p.cfg.Network
	if _, set := p.pos["network.defaultAction"]; set {
		if problem := checkDefaultAction(n.DefaultAction); problem != "" {
			return "network.defaultAction", problem
		}
	}
	if _, set := p.pos["network.upstreamProxy"]; set {
		if problem := checkUpstreamProxy(n.UpstreamProxy); problem != "" {
			return "network.upstreamProxy", fmt.Sprintf("%q %s", RedactProxyURL(n.UpstreamProxy), problem)
		}
	}
	return "", ""
}

// upstreamUnused warns of network.upstreamProxy without defaultAction
// "proxy": nothing is forwarded to it, which its author rarely means.
func (l *linter) upstreamUnused() {
	n := l.r.Config.Network
	if n.UpstreamProxy == "" || n.DefaultAction == DefaultActionProxy {
		return
	}
	l.add(Warning{Check: "upstream-proxy-unused", Msg: fmt.Sprintf("network.upstreamProxy is %s but network.defaultAction is not \"proxy\", so nothing is forwarded to it: set \"defaultAction\": \"proxy\" to send hosts no domain rule names there", RedactProxyURL(n.UpstreamProxy))})
}
