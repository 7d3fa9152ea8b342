package proxy

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"strconv"

	socks5 "github.com/armon/go-socks5"

	"github.com/fence-sandbox/fence/policy"
)

// ServeSOCKS runs the SOCKS5 proxy on l until l is closed. Names are
// resolved by the proxy (socks5h), after the policy has allowed them, so
// a denied name is never looked up.
func (s *Server) ServeSOCKS(l net.Listener) error {
	srv, err := socks5.New(&socks5.Config{
		Resolver: socksResolver{s},
		Rules:    socksRules{s},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d, ok := ctx.Value(connKey{}).(dialed)
			if !ok {
				return nil, errors.New("fence: BUG: SOCKS dial without a rules check")
			}
			return d.conn, d.err
		},
		Logger: log.New(io.Discard, "", 0),
	})
	if err != nil {
		return err
	}
	err = srv.Serve(l)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// connKey carries the connection made (or the error met) while the rules
// were checked, so that the check and the connection cannot disagree.
type connKey struct{}

type dialed struct {
	conn net.Conn
	err  error
}

// socksResolver resolves nothing itself: it leaves the name in place, so
// that the rules decide it before any lookup.
type socksResolver struct{ s *Server }

func (socksResolver) Resolve(ctx context.Context, name string) (context.Context, net.IP, error) {
	return ctx, net.IPv4zero, nil
}

type socksRules struct{ s *Server }

var deniedCommand = policy.NetDecision{Reason: "only CONNECT is allowed through fence's SOCKS proxy"}

// Allow decides a SOCKS request, and for an allowed CONNECT makes the
// connection, which Dial then hands over.
func (r socksRules) Allow(ctx context.Context, req *socks5.Request) (context.Context, bool) {
	host := req.DestAddr.FQDN
	if host == "" {
		host = req.DestAddr.IP.String()
	}
	port := strconv.Itoa(req.DestAddr.Port)
	if req.Command != socks5.ConnectCommand {
		r.s.refuse("SOCKS5", net.JoinHostPort(host, port), deniedCommand)
		return ctx, false
	}
	target := net.JoinHostPort(host, port)
	conn, err := r.s.connect(ctx, "SOCKS5", host, port)
	var ref *refused
	if errors.As(err, &ref) {
		return ctx, false // "connection not allowed by ruleset"
	}
	if err == nil {
		upstream := conn
		conn = r.s.gate("SOCKS5", target, host, port, upstream, func() { upstream.Close() })
	}
	return context.WithValue(ctx, connKey{}, dialed{conn, err}), true
}
