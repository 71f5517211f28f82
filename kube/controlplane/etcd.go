package controlplane

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// startEtcd runs an embedded etcd whose data lives under dir and whose
// clients connect through a unix socket there: no TCP port to pick or
// race for (the layout Kubernetes' own integration framework uses). It
// returns the URL the API server dials.
func startEtcd(dir string) (*embed.Etcd, string, error) {
	config := embed.NewConfig()
	config.Name = "wasched"
	config.Dir = filepath.Join(dir, "etcd")
	config.UnsafeNoFsync = true // the data is thrown away at exit
	socket := filepath.Join(dir, "etcd.sock")
	config.ListenClientUrls = []url.URL{{Scheme: "unix", Path: socket}}
	// Required to be valid, never dialled: clients use the socket.
	config.AdvertiseClientUrls = []url.URL{{Scheme: "http", Host: "127.0.0.111:0"}}
	// A peer listener on a port the kernel picks; a single member never
	// dials it.
	config.ListenPeerUrls = []url.URL{{Scheme: "http", Host: "127.0.0.1:0"}}
	config.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: "localhost:2380"}}
	config.InitialCluster = config.InitialClusterFromName(config.Name)
	config.EnableGRPCGateway = false
	config.QuotaBackendBytes = 8 << 30
	config.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())

	server, err := embed.StartEtcd(config)
	if err != nil {
		return nil, "", fmt.Errorf("etcd does not start: %w", err)
	}
	select {
	case <-server.Server.ReadyNotify():
	case err := <-server.Err():
		server.Close()
		return nil, "", fmt.Errorf("etcd failed while starting: %w", err)
	case <-time.After(60 * time.Second):
		server.Close()
		return nil, "", errors.New("etcd was not ready within 60s")
	}
	return server, "unix://" + socket, nil
}
