package proxy

import (
	"errors"
	"net"
)

// Relay accepts connections on l and joins each to a new connection from
// dial, both ways, until l is closed.
func Relay(l net.Listener, dial func() (net.Conn, error)) error {
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			target, err := dial()
			if err != nil {
				return
			}
			defer target.Close()
			splice(c, target)
		}()
	}
}
