package cmd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/net/proxy"
)

// newSSHProxyCmd is the ProxyCommand that lets ssh (and git over ssh)
// inside a sandbox reach a host through fence's SOCKS proxy, with no
// netcat: fence sets GIT_SSH_COMMAND to use it.
func newSSHProxyCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "ssh-proxy HOST PORT",
		Short: "Join stdin and stdout to HOST:PORT through the sandbox's SOCKS proxy (an ssh ProxyCommand)",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			u, err := url.Parse(os.Getenv("ALL_PROXY"))
			if err != nil || u.Host == "" {
				return errors.New("ALL_PROXY does not name fence's SOCKS proxy: ssh-proxy runs inside a fence sandbox")
			}
			d, err := proxy.SOCKS5("tcp", u.Host, nil, proxy.Direct)
			if err != nil {
				return err
			}
			conn, err := d.Dial("tcp", net.JoinHostPort(args[0], args[1]))
			if err != nil {
				return fmt.Errorf("connect to %s through fence's proxy: %w", net.JoinHostPort(args[0], args[1]), err)
			}
			defer conn.Close()
			go func() {
				io.Copy(conn, stdin)
				conn.(interface{ CloseWrite() error }).CloseWrite()
			}()
			_, err = io.Copy(stdout, conn)
			return err
		},
	}
}
