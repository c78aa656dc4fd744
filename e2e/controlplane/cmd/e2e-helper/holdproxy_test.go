package main

import (
	"io"
	"net"
	"testing"
	"time"
)

// echoThroughGate starts an echo server and a listener whose connections pass through g
// to it; it returns a connection to that listener.
func echoThroughGate(t *testing.T, g *gate) net.Conn {
	t.Helper()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	go func() {
		for {
			c, err := front.Accept()
			if err != nil {
				return
			}
			go g.pipe(c, echo.Addr().String())
		}
	}()
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes text and reads as much back within wait: what came back.
func roundTrip(t *testing.T, c net.Conn, text string, wait time.Duration) string {
	t.Helper()
	if text != "" {
		if _, err := c.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(c, buf, 1)
	return string(buf[:n])
}

func TestHoldProxyHoldsBytesUntilReleased(t *testing.T) {
	g := newGate()
	c := echoThroughGate(t, g)
	if got := roundTrip(t, c, "one", 2*time.Second); got != "one" {
		t.Fatalf("open: got %q", got)
	}
	g.hold()
	if got := roundTrip(t, c, "two", 300*time.Millisecond); got != "" {
		t.Fatalf("held: %q came through", got)
	}
	g.release()
	// What was held comes through once released, nothing lost.
	if got := roundTrip(t, c, "", 2*time.Second); got != "two" {
		t.Fatalf("released: got %q", got)
	}
}

func TestHoldProxyHoldsConnectionsOpenedWhileHeld(t *testing.T) {
	g := newGate()
	g.hold()
	c := echoThroughGate(t, g)
	if got := roundTrip(t, c, "new", 300*time.Millisecond); got != "" {
		t.Fatalf("held: %q came through", got)
	}
	g.release()
	if got := roundTrip(t, c, "", 2*time.Second); got != "new" {
		t.Fatalf("released: got %q", got)
	}
}
