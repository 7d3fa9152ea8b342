package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// rawExchange writes raw to the HTTP proxy and reads the responses to n
// requests.
func rawExchange(t *testing.T, proxyAddr, raw string, n int) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	var out []*http.Response
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading response %d to %q: %v", len(out)+1, raw, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		resp.Header.Set("X-Test-Body", string(body))
		out = append(out, resp)
	}
	return out
}

// TestForwardJudgesURIHost pins what the plain-HTTP proxy judges, dials
// and sends: the absolute URI's host, never a Host header or userinfo,
// request by request on a kept-alive connection.
func TestForwardJudgesURIHost(t *testing.T) {
	r := newRig(t)
	p := r.target
	tests := []struct {
		name, raw string
		statuses  []int
		bodies    []string // the target's echo of the Host it was sent, for /host
	}{
		{"forged Host header", "GET http://allowed.test:" + p + "/host HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n", []int{200}, []string{"allowed.test:" + p}},
		{"allowed Host header, denied URI", "GET http://denied.test:" + p + "/host HTTP/1.1\r\nHost: allowed.test:" + p + "\r\nConnection: close\r\n\r\n", []int{403}, nil},
		{"userinfo naming an allowed host", "GET http://allowed.test@denied.test:" + p + "/host HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", []int{403}, nil},
		{"userinfo with the allowed host and port", "GET http://allowed.test:" + p + "@denied.test/host HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", []int{403}, nil},
		{"userinfo naming a denied host", "GET http://denied.test@allowed.test:" + p + "/host HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n", []int{200}, []string{"allowed.test:" + p}},
		{"pipelined second request to a denied host",
			"GET http://allowed.test:" + p + "/host HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
				"GET http://denied.test:" + p + "/host HTTP/1.1\r\nHost: allowed.test:" + p + "\r\nConnection: close\r\n\r\n",
			[]int{200, 403}, []string{"allowed.test:" + p}},
		{"pipelined second request to a metadata name",
			"GET http://allowed.test:" + p + "/host HTTP/1.1\r\nHost: a\r\n\r\n" +
				"GET http://meta.test:" + p + "/host HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
			[]int{200, 403}, []string{"allowed.test:" + p}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resps := rawExchange(t, r.httpProxy, tt.raw, len(tt.statuses))
			for i, resp := range resps {
				if resp.StatusCode != tt.statuses[i] {
					t.Errorf("response %d: %d %q, want %d", i+1, resp.StatusCode, resp.Header.Get("X-Fence-Reason"), tt.statuses[i])
				}
				if i < len(tt.bodies) && resp.Header.Get("X-Test-Body") != tt.bodies[i] {
					t.Errorf("response %d: the target was sent Host %q, want %q", i+1, resp.Header.Get("X-Test-Body"), tt.bodies[i])
				}
			}
			for _, d := range r.takeDialed() {
				if d != "127.0.0.1:"+p {
					t.Errorf("dialled %s", d)
				}
			}
			r.mu.Lock()
			if slices.Contains(r.lookedUp, "denied.test") {
				t.Errorf("looked up denied.test: %v", r.lookedUp)
			}
			r.mu.Unlock()
		})
	}
}

// TestSOCKSCommandsRefused: SOCKS5 BIND and UDP ASSOCIATE are refused
// with the ruleset reply, logged, and dial nothing.
func TestSOCKSCommandsRefused(t *testing.T) {
	r := newRig(t)
	for _, cmd := range []struct {
		name string
		code byte
	}{{"BIND", 2}, {"UDP ASSOCIATE", 3}} {
		for _, addr := range [][]byte{{1, 127, 0, 0, 1}, append([]byte{3, 12}, "allowed.test"...)} {
			c, err := net.Dial("tcp", r.socksProxy)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write([]byte{5, 1, 0})
			greeting := make([]byte, 2)
			io.ReadFull(c, greeting)
			c.Write(append(append([]byte{5, cmd.code, 0}, addr...), 0, 80))
			reply := make([]byte, 10)
			n, _ := io.ReadFull(c, reply)
			c.Close()
			if greeting[1] != 0 || n < 2 || reply[1] != 2 { // 2: connection not allowed by ruleset
				t.Errorf("SOCKS5 %s: greeting %v, reply %v, want reply code 2", cmd.name, greeting, reply[:n])
			}
		}
		events := r.takeEvents()
		if len(events) != 2 || events[0].Decision.Reason != deniedCommand.Reason {
			t.Errorf("SOCKS5 %s: events %v, want two refusals of the command", cmd.name, events)
		}
	}
	if d := r.takeDialed(); len(d) > 0 {
		t.Errorf("dialled %v", d)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lookedUp) > 0 {
		t.Errorf("looked up %v for a refused command", r.lookedUp)
	}
}

// TestForwardOnlyHTTP: the plain proxy forwards http:// alone, and a
// request that is not a proxy request is answered, not forwarded.
func TestForwardOnlyHTTP(t *testing.T) {
	r := newRig(t)
	for raw, want := range map[string]int{
		"GET https://allowed.test:" + r.target + "/ HTTP/1.1\r\nConnection: close\r\n\r\n":       400,
		"GET /host HTTP/1.1\r\nHost: allowed.test:" + r.target + "\r\nConnection: close\r\n\r\n": 400,
		"GET ftp://allowed.test/ HTTP/1.1\r\nConnection: close\r\n\r\n":                          400,
	} {
		if resp := rawExchange(t, r.httpProxy, raw, 1)[0]; resp.StatusCode != want {
			t.Errorf("%q: %d, want %d", raw, resp.StatusCode, want)
		}
	}
	if d := r.takeDialed(); len(d) > 0 {
		t.Errorf("dialled %v", d)
	}
}
