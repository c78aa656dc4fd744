package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// holdProxy (e2e-helper hold-proxy LISTEN TARGET) copies TCP connections on LISTEN to
// TARGET, both ways, like forward, and can hold them: on SIGUSR1 it stops passing bytes on
// in both directions (what each side sends waits, in the proxy and in the sockets' buffers;
// no connection is closed, new ones are accepted and held too), on SIGUSR2 it passes them
// on again. A kube-apiserver reaching etcd through it keeps serving from its watch cache
// while held, and that cache lags: how a story gets a server whose view is stale.
//
// It prints "listening ADDR" on its first line of output, then "held" or "released" once
// each signal has taken effect (a byte not yet passed on when "held" is printed is held).
// Runs until TERM or INT.
func holdProxy(args []string) error {
	if len(args) != 2 {
		usage()
	}
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		return err
	}
	g := newGate()
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGINT)
	out := bufio.NewWriter(os.Stdout)
	say := func(line string) { fmt.Fprintln(out, line); out.Flush() }
	say("listening " + ln.Addr().String())
	go func() {
		for s := range signals {
			switch s {
			case syscall.SIGUSR1:
				g.hold()
				say("held")
			case syscall.SIGUSR2:
				g.release()
				say("released")
			default:
				g.release()
				ln.Close()
				return
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			// Closed on TERM or INT.
			return nil
		}
		go g.pipe(c, args[1])
	}
}

// gate is open or held; a copy waits at it before each chunk it passes on.
type gate struct {
	mu   sync.Mutex
	held bool
	// The chunks being passed on: hold waits for them, so none is sent after "held".
	passing sync.WaitGroup
	open    *sync.Cond
}

func newGate() *gate {
	g := &gate{}
	g.open = sync.NewCond(&g.mu)
	return g
}

func (g *gate) hold() {
	g.mu.Lock()
	g.held = true
	g.mu.Unlock()
	g.passing.Wait()
}

func (g *gate) release() {
	g.mu.Lock()
	g.held = false
	g.mu.Unlock()
	g.open.Broadcast()
}

// enter waits until the gate is open and counts a chunk being passed on.
func (g *gate) enter() {
	g.mu.Lock()
	for g.held {
		g.open.Wait()
	}
	g.passing.Add(1)
	g.mu.Unlock()
}

// copy passes src's bytes on to dst, each chunk through the gate.
func (g *gate) copy(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			g.enter()
			_, werr := dst.Write(buf[:n])
			g.passing.Done()
			if werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.Close()
				return
			}
			dst.(*net.TCPConn).CloseWrite()
			return
		}
	}
}

func (g *gate) pipe(c net.Conn, target string) {
	defer c.Close()
	t, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e-helper hold-proxy: %v\n", err)
		return
	}
	defer t.Close()
	done := make(chan struct{}, 2)
	go func() { g.copy(t, c); done <- struct{}{} }()
	go func() { g.copy(c, t); done <- struct{}{} }()
	<-done
	<-done
}
