package linux

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/fence-sandbox/fence/sandbox"
	"github.com/fence-sandbox/fence/sandbox/proxy"
)

// listenAddrs are the addresses the sandbox child listens on inside the sandbox,
// in the order the supervisor expects them: HTTP proxy, SOCKS5 proxy,
// then each local port on 127.0.0.1 and on ::1.
func listenAddrs(p *sandbox.Proxy) []string {
	addrs := []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(p.HTTPPort)), net.JoinHostPort("127.0.0.1", strconv.Itoa(p.SOCKSPort))}
	for _, port := range p.LocalPorts {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), net.JoinHostPort("::1", strconv.Itoa(port)))
	}
	return addrs
}

// serveProxies serves the proxies (and local port relays) on the
// listeners, with the plan's domain rules, until the returned stop is
// called.
func serveProxies(plan *sandbox.Plan, rec *sandbox.Recorder, listeners []net.Listener, stderr io.Writer) (stop func()) {
	if len(listeners) < 2 {
		closeListeners(listeners)
		return func() {}
	}
	srv := &proxy.Server{Policy: plan.ProxyPolicy()}
	if o := plan.Proxy.Outer; o != nil && !o.Reuse {
		srv.Upstream = proxy.ConnectVia(net.JoinHostPort("127.0.0.1", strconv.Itoa(o.HTTPPort)))
	}
	var blocked atomic.Int64
	var refused sandbox.Refusals
	srv.Log = func(e proxy.Event) {
		blocked.Add(1)
		rec.Network(e.Proto, e.Target, e.Decision)
		refused.Add(srv.Policy.NetworkDecision(e.Proto, e.Target, e.Target, e.Decision))
		if plan.Monitor {
			fmt.Fprintf(stderr, "fence: %s\n", e)
		}
	}
	go srv.ServeHTTP(listeners[0])
	go srv.ServeSOCKS(listeners[1])
	// The local ports are relayed only from the sandbox's own network
	// namespace; on the host's loopback there are just the two proxies.
	for i, addr := range listenAddrs(plan.Proxy)[2:] {
		if 2+i >= len(listeners) {
			break
		}
		go proxy.Relay(listeners[2+i], func() (net.Conn, error) { return net.Dial("tcp", addr) }, nil)
	}
	return func() {
		closeListeners(listeners)
		switch {
		case plan.Monitor:
			fmt.Fprintf(stderr, "fence: monitor: %d connections blocked\n", blocked.Load())
		case plan.Proxy.RefusalSummary:
			if line := refused.Summary(); line != "" {
				fmt.Fprintf(stderr, "fence: %s\n", line)
			}
		}
	}
}

// fileListeners turns the descriptors the child sent into listeners; it
// returns none unless they are all there.
func fileListeners(p *sandbox.Proxy, files []*os.File) []net.Listener {
	if p == nil {
		for _, f := range files {
			f.Close()
		}
		return nil
	}
	var listeners []net.Listener
	for _, f := range files {
		if l, err := net.FileListener(f); err == nil {
			listeners = append(listeners, l)
		}
		f.Close()
	}
	if len(listeners) != len(listenAddrs(p)) {
		closeListeners(listeners)
		return nil
	}
	return listeners
}

// hostProxyListeners listens for the proxies on the host's loopback, for
// a sandbox that shares the host's network, and points w's environment
// at them (or at the outer sandbox's, in a nested run that may not
// listen). Without namespaces (the Landlock-only fallback), Landlock's
// TCP rules then limit connections to those ports and the local ports
// the policy allows.
func hostProxyListeners(w *wire) ([]net.Listener, error) {
	if o := w.Plan.Proxy.Outer; o != nil && o.Reuse {
		useOuterProxies(w, o)
		return nil, nil
	}
	var listeners []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			closeListeners(listeners)
			return nil, fmt.Errorf("listen for the proxies: %w", err)
		}
		listeners = append(listeners, l)
	}
	// The run's plan with the proxies where they listen: the command's
	// environment, and without namespaces the ports the supervisor
	// judges and Landlock's TCP rules (see sandbox.Runtime.Plan).
	w.Runtime.Proxies = &sandbox.HostProxies{HTTPPort: listeners[0].Addr().(*net.TCPAddr).Port, SOCKSPort: listeners[1].Addr().(*net.TCPAddr).Port}
	w.Plan = w.Runtime.Plan(w.Source)
	w.Env = w.Plan.Env
	return listeners, nil
}

// landlockOnlyRules are what the supervisor lets the Landlock-only
// sandbox of plan connect to: the proxies hostProxyListeners opened, the
// local ports, and no host socket of the plan's masks.
func landlockOnlyRules(plan *sandbox.Plan) connectRules {
	r := connectRules{Filtered: plan.Network == "none"}
	if p := plan.Proxy; p != nil {
		r.ProxyPorts = []int{p.HTTPPort, p.SOCKSPort}
		r.LocalPorts = p.LocalPorts
	}
	var socks []string
	for _, m := range plan.Mounts.Masks {
		socks = append(socks, m.Path)
	}
	r.HostSockets = hostSocketKeys(socks)
	return r
}
