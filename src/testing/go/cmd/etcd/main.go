// Command etcd runs one embedded etcd server (go.etcd.io/etcd/server/v3/embed) for the local test clusters.
//
// It is tuned for tests, not durability: the data directory is expected on tmpfs and fsync is off.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd data (tmpfs recommended)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL")
	quotaBytes := flag.Int64("quota-backend-bytes", 8<<30, "backend quota in bytes")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}
	cu, err := url.Parse(*clientURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: invalid --listen-client-url %q: %v\n", *clientURL, err)
		os.Exit(2)
	}
	pu, err := url.Parse(*peerURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: invalid --listen-peer-url %q: %v\n", *peerURL, err)
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Name = "local"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = *quotaBytes
	cfg.LogLevel = "error"
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: could not start: %v\n", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("etcd: ready on", cu.String())
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		os.Exit(1)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sigs:
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: stopped with error: %v\n", err)
		e.Close()
		os.Exit(1)
	}
	e.Close()
}
