// Command etcd runs a single-member etcd server (go.etcd.io/etcd/server/v3/embed) for the
// end-to-end control plane: plain HTTP on loopback, data in the given directory.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "data directory (required)")
	client := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL")
	peer := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("etcd: --data-dir is required")
	}
	clientURL, err := url.Parse(*client)
	if err != nil {
		log.Fatalf("etcd: --listen-client-url: %v", err)
	}
	peerURL, err := url.Parse(*peer)
	if err != nil {
		log.Fatalf("etcd: --listen-peer-url: %v", err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// A throwaway test store: no fsync wait on every write.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer e.Close()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-e.Server.ReadyNotify():
		log.Printf("etcd: ready, serving clients on %s", clientURL)
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
		return
	}
	select {
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
		log.Print("etcd: stopping")
	}
}
