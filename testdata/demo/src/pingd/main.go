// Command pingd is the demo's stand-in for an upstream daemon (like etcd or
// runc): a raw binary released with a clearsigned SHA256SUMS list. It answers
// "ok" to every TCP connection on $PINGD_LISTEN (default 127.0.0.1:8099).
package main

import (
	"fmt"
	"net"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("pingd", version)
		return
	}
	addr := os.Getenv("PINGD_LISTEN")
	if addr == "" {
		addr = "127.0.0.1:8099"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingd:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		fmt.Fprintln(c, "ok")
		c.Close()
	}
}
