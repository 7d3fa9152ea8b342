package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Relay accepts connections on l and joins each to a new connection from
// dial, both ways, until l is closed. When pending is not nil, each
// connection counts in it until what the dialled side sent has been
// passed on, so that a caller about to exit can wait for the last bytes of
// a server that has just finished.
func Relay(l net.Listener, dial func() (net.Conn, error), pending *sync.WaitGroup) error {
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		done := func() {}
		if pending != nil {
			pending.Add(1)
			done = sync.OnceFunc(pending.Done)
		}
		go func() {
			defer c.Close()
			defer done()
			target, err := dial()
			if err != nil {
				return
			}
			defer target.Close()
			join(c, target, done)
		}()
	}
}

// join copies both ways between the accepted c and target until both
// directions end; inbound runs once target's side has all been passed on.
func join(c, target net.Conn, inbound func()) {
	out := make(chan struct{})
	go func() {
		io.Copy(target, c)
		closeWrite(target)
		close(out)
	}()
	io.Copy(c, target)
	closeWrite(c)
	inbound()
	<-out
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
