package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// Under network.defaultAction "proxy" the hosts no domain rule names go
// to the user's upstream proxy (policy.UpstreamProxy): plain HTTP as
// absolute-URI requests, CONNECT and SOCKS5 connections as CONNECT
// tunnels. Before that, fence resolves the name itself and holds every
// address to the address rules (one refused address refuses the host),
// then names the first of them to the upstream, never the name: an
// upstream that resolved the name again could get another answer (a
// rebinding name, a resolver of its own) and reach what the address
// rules refuse. Plain HTTP keeps the name in the Host header; a TLS
// client's ClientHello still carries it as SNI. A name fence cannot
// resolve is refused, since its addresses cannot be checked.

// failed is an error of the upstream proxy's (unreachable, or a CONNECT
// it did not grant): a 502 for the client, and counted with the
// refusals, naming the upstream, since the connection was not made.
type failed struct{ d policy.NetDecision }

func (f *failed) Error() string { return f.d.Reason }

// upstreamFailure is the decision that reports the upstream proxy's
// failure to carry a connection to host.
func upstreamFailure(u *policy.UpstreamProxy, host, what string) policy.NetDecision {
	return policy.NetDecision{Host: host, Rule: `network.upstreamProxy "` + u.URL() + `"`, Key: "network.upstreamProxy", Pattern: u.URL(),
		Reason: fmt.Sprintf("the upstream proxy %s (network.upstreamProxy) %s", u.URL(), what),
		Fix:    fmt.Sprintf("the upstream proxy %s %s: check that it runs and accepts fence's requests, or set network.defaultAction \"deny\"", u.URL(), what)}
}

func (s *Server) fail(proto, target string, d policy.NetDecision) error {
	if s.Log != nil {
		s.Log(Event{Proto: proto, Target: target, Decision: d})
	}
	return &failed{d}
}

// forwarded reports whether d sends the connection to the upstream
// proxy: in a fence run nested in a fence sandbox, s.Upstream carries
// every allowed host to the outer sandbox's proxy, forwarded ones too.
func (s *Server) forwarded(d policy.NetDecision) bool {
	return d.Allowed && d.Upstream != "" && s.Upstream == nil && s.Policy.Upstream != nil
}

// checkForwarded refuses a forwarded host when it, or any address it
// resolves to, is refused by the address rules, and otherwise returns
// the address the upstream is to connect to: the first one checked.
func (s *Server) checkForwarded(ctx context.Context, proto, host, port string, d policy.NetDecision) (netip.Addr, error) {
	target := net.JoinHostPort(host, port)
	addrs, err := s.resolve(ctx, d.Host)
	if err != nil || len(addrs) == 0 {
		why := "no address"
		if err != nil {
			why = err.Error()
		}
		return netip.Addr{}, s.refuse(proto, target, policy.NetDecision{Host: d.Host, Rule: "network.defaultAction \"proxy\"",
			Reason: fmt.Sprintf("fence could not resolve %s (%s), so it cannot check the addresses before forwarding it to the upstream proxy", d.Host, why),
			Fix:    fmt.Sprintf("add %s to network.allowedDomains or network.deniedDomains, or make it resolve where fence runs", d.Host)})
	}
	for _, a := range addrs {
		if ad := s.Policy.DecideAddr(d.Host, port, a); !ad.Allowed {
			ad.Reason += "; such a host is not forwarded to the upstream proxy either"
			return netip.Addr{}, s.refuse(proto, target, ad)
		}
	}
	return addrs[0].Unmap(), nil
}

// checkedTarget is addr:port as the upstream is asked for it, an IPv6
// address in brackets.
func checkedTarget(addr netip.Addr, port string) string {
	return net.JoinHostPort(addr.WithZone("").String(), port)
}

// forward opens a tunnel to host:port through the upstream proxy, for
// CONNECT and SOCKS5.
func (s *Server) forward(ctx context.Context, proto, host, port string, d policy.NetDecision) (net.Conn, error) {
	addr, err := s.checkForwarded(ctx, proto, host, port, d)
	if err != nil {
		return nil, err
	}
	u := s.Policy.Upstream
	conn, err := s.dialUpstream(ctx, proto, host, port)
	if err != nil {
		return nil, err
	}
	tunnel, err := upstreamConnect(conn, checkedTarget(addr, port), u.Authorization)
	if err != nil {
		conn.Close()
		return nil, s.fail(proto, net.JoinHostPort(host, port), upstreamFailure(u, d.Host, err.Error()))
	}
	return tunnel, nil
}

// dialUpstream connects to the upstream proxy itself.
func (s *Server) dialUpstream(ctx context.Context, proto, host, port string) (net.Conn, error) {
	u := s.Policy.Upstream
	conn, err := s.dial(ctx, "tcp", u.Addr)
	if err != nil {
		return nil, s.fail(proto, net.JoinHostPort(host, port), upstreamFailure(u, host, "could not be reached: "+err.Error()))
	}
	return conn, nil
}

// upstreamConnect asks the proxy on conn for a tunnel to target, with the
// Proxy-Authorization auth when not empty, and returns the tunnel with
// whatever the server sent right behind the proxy's answer.
func upstreamConnect(conn net.Conn, target, auth string) (net.Conn, error) {
	conn.SetDeadline(time.Now().Add(upstreamTimeout))
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if auth != "" {
		req.Header.Set("Proxy-Authorization", auth)
	}
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("could not be asked for %s: %w", target, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("gave no answer fence could read for %s: %w", target, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, fmt.Errorf("answered %q to CONNECT %s", resp.Status, target)
	}
	conn.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		return &earlyConn{Conn: conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)}, nil
	}
	return conn, nil
}

// forwardHTTP sends a plain HTTP request for a forwarded host to the
// upstream proxy, as an absolute-URI request for the checked address
// with the client's Host header, and passes its answer on.
func (s *Server) forwardHTTP(w http.ResponseWriter, r *http.Request, port string, d policy.NetDecision) {
	host := r.URL.Hostname()
	addr, err := s.checkForwarded(r.Context(), "HTTP", host, port, d)
	var ref *refused
	switch {
	case errors.As(err, &ref):
		refuseHTTP(w, "HTTP", r.URL.Host, ref)
		return
	case err != nil:
		failHTTP(w, "HTTP", r.URL.Host, &failed{upstreamFailure(s.Policy.Upstream, d.Host, err.Error())})
		return
	}
	u := s.Policy.Upstream
	transport := &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: u.Addr}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return s.dialUpstream(ctx, "HTTP", host, port)
		},
		DisableKeepAlives: true,
	}
	out := outbound(r)
	out.Host = r.Host
	if out.Host == "" {
		out.Host = r.URL.Host
	}
	// The request line names the checked address; net/http writes
	// out.Host there unless the URL is opaque.
	out.URL.Host = checkedTarget(addr, port)
	out.URL.Opaque = "//" + out.URL.Host + out.URL.EscapedPath()
	if u.Authorization != "" {
		out.Header.Set("Proxy-Authorization", u.Authorization)
	}
	resp, err := transport.RoundTrip(out)
	var f *failed
	switch {
	case errors.As(err, &f):
		failHTTP(w, "HTTP", r.URL.Host, f)
		return
	case err != nil:
		failHTTP(w, "HTTP", r.URL.Host, &failed{upstreamFailure(u, d.Host, err.Error())})
		return
	}
	relayResponse(w, resp)
}

// failHTTP answers a request the upstream proxy did not carry with 502,
// the reason in a header and in the body.
func failHTTP(w http.ResponseWriter, proto, target string, f *failed) {
	w.Header().Set("X-Fence-Reason", f.d.Reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "fence: %s %s not forwarded: %s\nfence: hint: %s\n", proto, target, f.d.Reason, f.d.Fix)
}
