package testenv

import (
	"net"
	"testing"
)

// Listen serves connections to a new 127.0.0.1 port with handle until t
// ends, and returns the port's address (a fake proxy or server that a test
// scripts byte by byte).
func Listen(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go Serve(l, handle)
	return l.Addr().String()
}

// Serve serves each connection l accepts with handle on a goroutine of its
// own, closing the connection after, until l is closed.
func Serve(l net.Listener, handle func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			handle(c)
		}()
	}
}
