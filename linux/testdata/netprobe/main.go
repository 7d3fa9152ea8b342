// Command netprobe tries, from inside a sandbox, to reach a destination
// the way a client would: through the HTTP proxy, a CONNECT tunnel, the
// SOCKS5 proxy (from HTTP_PROXY and ALL_PROXY), or directly. It prints one
// line: what came back, or the error.
package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/net/proxy"
)

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "exec" {
		// Run a program the way a child process would, past preflight:
		// exec NAME runs NAME unix /nonexistent; exec NAME ARGS... runs NAME ARGS....
		argv := os.Args[2:]
		if len(argv) == 1 {
			argv = append(argv, "unix", "/nonexistent")
		}
		path, err := exec.LookPath(argv[0])
		if err == nil {
			err = syscall.Exec(path, argv, os.Environ())
		}
		fmt.Println("error:", err)
		return
	}
	if len(os.Args) != 3 {
		fmt.Println("usage: netprobe http|connect|tls|socks|direct|serve|selfdial|autolisten|unix|raw TARGET, or exec NAME [ARGS...]")
		os.Exit(2)
	}
	out, err := probe(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
}

func probe(mode, target string) (string, error) {
	httpProxy, _ := url.Parse(os.Getenv("HTTP_PROXY"))
	switch mode {
	case "http":
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(httpProxy)}}
		resp, err := client.Get(target)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s | %s", resp.StatusCode, resp.Header.Get("X-Fence-Reason"), strings.TrimSpace(string(body))), nil
	case "connect":
		conn, err := net.Dial("tcp", httpProxy.Host)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		line, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), err
	case "tls": // TARGET is HOST:PORT/SNI: a CONNECT tunnel, then TLS naming SNI
		hostPort, sni, _ := strings.Cut(target, "/")
		conn, err := net.Dial("tcp", httpProxy.Host)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			return resp.Status, nil
		}
		tc := tls.Client(conn, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			return "", err
		}
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
		body, _ := io.ReadAll(tc)
		_, body2, _ := strings.Cut(string(body), "\r\n\r\n")
		return "tls " + strings.TrimSpace(body2), nil
	case "socks":
		socks, _ := url.Parse(os.Getenv("ALL_PROXY"))
		d, err := proxy.SOCKS5("tcp", socks.Host, nil, proxy.Direct)
		if err != nil {
			return "", err
		}
		conn, err := d.Dial("tcp", target)
		if err != nil {
			return "", err
		}
		conn.Close()
		return "connected", nil
	case "serve": // answer one connection on the sandbox's loopback
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", target))
		if err != nil {
			return "", err
		}
		fmt.Println("listening")
		c, err := l.Accept()
		if err != nil {
			return "", err
		}
		io.WriteString(c, "from-sandbox\n")
		c.Close()
		return "served", nil
	case "selfdial": // TARGET is a comma-separated list of addresses: listen on each at port 0, connect to it, read back
		var got []string
		for _, host := range strings.Split(target, ",") {
			line, err := selfDial(host)
			if err != nil {
				return strings.Join(append(got, "error: "+err.Error()), "; "), nil
			}
			got = append(got, line)
		}
		return strings.Join(got, "; "), nil
	case "autolisten": // listen() on a TCP socket never bound, which binds a port of the kernel's choosing on every address; TARGET is ignored
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			return "", err
		}
		defer syscall.Close(fd)
		if err := syscall.Listen(fd, 1); err != nil {
			return "", fmt.Errorf("listen: %w", err)
		}
		return "listening", nil
	case "raw": // an ICMP raw socket, as ping uses
		c, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
		if err != nil {
			return "", err
		}
		c.Close()
		return "raw socket", nil
	case "unix":
		conn, err := net.Dial("unix", target)
		if err != nil {
			return "", err
		}
		conn.Close()
		return "connected", nil
	case "direct":
		conn, err := net.Dial("tcp", target)
		if err != nil {
			return "", err
		}
		conn.Close()
		return "connected", nil
	}
	return "", fmt.Errorf("unknown mode %q", mode)
}

// selfDial listens on host at a port the kernel picks, as an
// httptest.Server does, connects to it and reads what the server sent.
func selfDial(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			io.WriteString(c, "hello\n")
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return host + " " + strings.TrimSpace(line), nil
}
