package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ServeHTTP runs the HTTP proxy on l until l is closed.
func (s *Server) ServeHTTP(l net.Listener) error {
	srv := &http.Server{Handler: http.HandlerFunc(s.handleHTTP), ReadHeaderTimeout: 30 * time.Second}
	err := srv.Serve(l)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) handleHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		s.handleConnect(w, r)
	case r.URL.IsAbs() && r.URL.Host != "":
		s.handleForward(w, r)
	default:
		http.Error(w, "fence: this is fence's proxy; send proxy requests (absolute URLs or CONNECT)", http.StatusBadRequest)
	}
}

// refuseHTTP answers a refused request with 403, the reason in a header
// and in the body, so that a person or an agent can fix the policy.
func refuseHTTP(w http.ResponseWriter, proto, target string, r *refused) {
	reason := r.d.Reason
	if r.d.Rule != "" {
		reason += " (" + r.d.Rule + ")"
	}
	hint := "add the host to network.allowedDomains in fence.jsonc if the command needs it"
	if r.d.Fix != "" {
		hint = r.d.Fix
	}
	w.Header().Set("X-Fence-Reason", reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "fence: blocked %s %s: %s\nfence: hint: %s\n", proto, target, reason, hint)
}

func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "fence: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	target, err := s.connect(r.Context(), "CONNECT", host, port)
	var ref *refused
	var f *failed
	switch {
	case errors.As(err, &ref):
		refuseHTTP(w, "CONNECT", r.Host, ref)
		return
	case errors.As(err, &f):
		failHTTP(w, "CONNECT", r.Host, f)
		return
	case err != nil:
		http.Error(w, "fence: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer target.Close()
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "fence: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer client.Close()
	io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n")
	up := s.gate("CONNECT", r.Host, host, port, target, func() {
		client.Write(tlsAccessDenied)
		target.Close()
		client.Close()
	})
	if n := buf.Reader.Buffered(); n > 0 {
		data, _ := buf.Reader.Peek(n)
		if _, err := up.Write(data); err != nil {
			return
		}
	}
	splice(client, up)
}

// hopHeaders are meant for the proxy, not the server.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (s *Server) handleForward(w http.ResponseWriter, r *http.Request) {
	port := r.URL.Port()
	if port == "" {
		port = "80"
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "fence: only http:// URLs can be forwarded; use CONNECT for https", http.StatusBadRequest)
		return
	}
	if d := s.Policy.DecideHostPort(r.URL.Hostname(), port); s.forwarded(d) {
		s.forwardHTTP(w, r, port, d)
		return
	}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return s.connect(ctx, "HTTP", r.URL.Hostname(), port)
		},
		DisableKeepAlives: true,
	}
	resp, err := transport.RoundTrip(outbound(r))
	var ref *refused
	switch {
	case errors.As(err, &ref):
		refuseHTTP(w, "HTTP", r.URL.Host, ref)
		return
	case err != nil:
		http.Error(w, "fence: "+err.Error(), http.StatusBadGateway)
		return
	}
	relayResponse(w, resp)
}

// outbound is the client's request as fence sends it on: without the
// headers meant for fence's proxy (the client's Proxy-Authorization
// among them).
func outbound(r *http.Request) *http.Request {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	return out
}

// relayResponse passes resp on to the client, without hop headers.
func relayResponse(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// splice copies both ways until either side is done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
