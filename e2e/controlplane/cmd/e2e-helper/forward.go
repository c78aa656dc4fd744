package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// forward LISTEN TARGET: accept TCP connections on LISTEN and copy each, both ways, to a new
// connection to TARGET, until TERM or INT. The real node's network namespace reaches the API
// server, which listens on loopback only, through this: the bytes pass untouched (TLS is end
// to end), and nothing but LISTEN is opened to the node.
func forward(args []string) error {
	if len(args) != 2 {
		usage()
	}
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		return err
	}
	var stopping atomic.Bool
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; stopping.Store(true); ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			if stopping.Load() {
				return nil
			}
			return err
		}
		go pipe(c, args[1])
	}
}

func pipe(c net.Conn, target string) {
	defer c.Close()
	t, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e-helper forward: %v\n", err)
		return
	}
	defer t.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(t, c); t.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, t); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}
