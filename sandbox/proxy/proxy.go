// Package proxy holds fence's network proxies: an HTTP proxy (CONNECT
// tunnels and absolute-URI requests) and a SOCKS5 proxy with remote name
// resolution. They are the only way out of a sandbox with a private
// network, and they decide every connection by the policy's domain
// rules, refusing with the rule that decided: the name first, then each
// address it resolves to (only an address the policy allows is dialled,
// by its literal, with no second lookup), then, in a tunnel that begins
// with a TLS ClientHello, the server names (SNI) it asks for.
//
// It decides nothing itself (package policy does) and knows nothing of
// how its listeners reach the sandbox (the platform backends do).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/fence-sandbox/fence/policy"
)

// Server proxies connections to what its policy allows.
type Server struct {
	Policy *policy.Policy
	// Resolve looks up a host name; nil means the system resolver. Tests
	// map names to loopback addresses here.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address; nil means a plain net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Upstream, when set, reaches an allowed host:port through another
	// proxy, by name, instead of resolving and dialling it (see
	// ConnectVia): a fence run nested in a fence sandbox has no route of
	// its own. An address literal is still held to the address rules.
	Upstream func(ctx context.Context, host, port string) (net.Conn, error)
	// Log, when set, hears about every connection the proxies refuse.
	Log func(Event)
}

// Event is one refused connection.
type Event struct {
	Proto    string // "CONNECT", "HTTP" or "SOCKS5"
	Target   string // host:port as the client asked
	Decision policy.NetDecision
}

func (e Event) String() string {
	rule := ""
	if e.Decision.Rule != "" {
		rule = " (" + e.Decision.Rule + ")"
	}
	return fmt.Sprintf("blocked %s %s — %s%s", e.Proto, e.Target, e.Decision.Reason, rule)
}

// refused is the error for a connection the policy does not allow.
type refused struct{ d policy.NetDecision }

func (r *refused) Error() string { return r.d.Reason }

// connect decides host, resolves it, drops addresses the policy refuses
// (a name that leads to the host's loopback, the metadata service or a
// private range the policy does not open), and dials the first allowed
// address by its literal; a host the policy forwards goes to the
// upstream proxy instead (see forward). A refusal is a *refused error,
// a failure of the upstream proxy a *failed one.
func (s *Server) connect(ctx context.Context, proto, host, port string) (net.Conn, error) {
	d := s.Policy.DecideHostPort(host, port)
	if !d.Allowed {
		return nil, s.refuse(proto, net.JoinHostPort(host, port), d)
	}
	if s.Upstream != nil {
		return s.connectUpstream(ctx, proto, host, port, d)
	}
	if s.forwarded(d) {
		return s.forward(ctx, proto, host, port, d)
	}
	addrs, err := s.resolve(ctx, d.Host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", d.Host, err)
	}
	var denied *policy.NetDecision
	var dialErr error
	for _, a := range addrs {
		if ad := s.Policy.DecideAddr(d.Host, port, a); !ad.Allowed {
			denied = &ad
			continue
		}
		conn, err := s.dial(ctx, "tcp", net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		dialErr = err
	}
	if dialErr == nil && denied != nil {
		return nil, s.refuse(proto, net.JoinHostPort(host, port), *denied)
	}
	if dialErr == nil {
		dialErr = errors.New("no address")
	}
	if denied != nil {
		// An allowed address failed: say why the others were not tried.
		return nil, fmt.Errorf("%w; another address of %s was refused: %s", dialErr, d.Host, denied.Reason)
	}
	return nil, dialErr
}

// connectUpstream reaches an allowed d.Host through s.Upstream, which
// names the outer proxy's refusal as this one's.
func (s *Server) connectUpstream(ctx context.Context, proto, host, port string, d policy.NetDecision) (net.Conn, error) {
	target := net.JoinHostPort(host, port)
	if a, err := netip.ParseAddr(d.Host); err == nil {
		if ad := s.Policy.DecideAddr(d.Host, port, a); !ad.Allowed {
			return nil, s.refuse(proto, target, ad)
		}
	}
	conn, err := s.Upstream(ctx, d.Host, port)
	var ref *refused
	if errors.As(err, &ref) {
		return nil, s.refuse(proto, target, ref.d)
	}
	return conn, err
}

func (s *Server) refuse(proto, target string, d policy.NetDecision) error {
	if s.Log != nil {
		s.Log(Event{Proto: proto, Target: target, Decision: d})
	}
	return &refused{d}
}

func (s *Server) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if s.Resolve != nil {
		return s.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func (s *Server) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if s.Dial != nil {
		return s.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
