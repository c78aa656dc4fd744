package main

import (
	"fmt"
	"net"
	"strconv"
)

// ports prints N distinct free loopback ports: all listeners are held open until every
// port is known, so the N are distinct; they are closed before printing, so a later
// process can bind them (a small race with other programs on the machine remains).
func ports(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 64 {
		return fmt.Errorf("N must be 1..64, got %q", args[0])
	}
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		listeners = append(listeners, l)
	}
	out := make([]int, 0, n)
	for _, l := range listeners {
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range listeners {
		_ = l.Close()
	}
	listeners = nil
	for _, p := range out {
		fmt.Println(p)
	}
	return nil
}
