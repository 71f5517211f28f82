// Package controlplane runs a real Kubernetes v1.37 control plane inside
// this process: an embedded etcd and the real kube-apiserver, on loopback,
// with certificates of its own and all state in a temporary directory that
// Stop removes. No kubelet, controller manager or container runtime runs;
// Nodes are objects, and pods are bound by whichever scheduler runs
// against it.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options choose where the control plane listens.
type Options struct {
	// Port on 127.0.0.1 for the API server; 0 picks a free one.
	Port int
	// StartTimeout bounds the wait for the API server to be ready.
	StartTimeout time.Duration
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	dir     string
	cancel  context.CancelFunc
	etcd    *embed.Etcd
	stopped <-chan error
	pki     *pki
	host    string
}

// Start runs etcd and the API server and returns once the server answers
// /readyz (its post-start hooks, such as the system PriorityClasses and
// the RBAC roles, have run). On error nothing is left running.
func Start(ctx context.Context, options Options) (cp *ControlPlane, err error) {
	if err := SetFeatureGates(); err != nil {
		return nil, err
	}
	if options.StartTimeout == 0 {
		options.StartTimeout = 2 * time.Minute
	}
	// A short directory name: the etcd unix socket lives in it (sockets
	// have a path limit of about 108 bytes).
	dir, err := os.MkdirTemp("", "wasched-kube-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the state directory: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	cp = &ControlPlane{dir: dir, cancel: cancel}
	defer func() {
		if err != nil {
			cp.Stop()
			cp = nil
		}
	}()

	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(options.Port))
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return cp, fmt.Errorf("the API server cannot listen on %s: %w", address, err)
	}
	cp.host = "https://" + listener.Addr().String()
	if cp.pki, err = newPKI(dir, net.ParseIP("127.0.0.1")); err != nil {
		listener.Close()
		return cp, fmt.Errorf("cannot make certificates: %w", err)
	}
	var etcdURL string
	if cp.etcd, etcdURL, err = startEtcd(dir); err != nil {
		listener.Close()
		return cp, err
	}
	if cp.stopped, err = startAPIServer(runCtx, listener, etcdURL, dir, cp.pki); err != nil {
		listener.Close()
		return cp, err
	}
	if err := cp.waitReady(ctx, options.StartTimeout); err != nil {
		return cp, err
	}
	recordStart(cp.host)
	return cp, nil
}

// StartLogEnv names a file to which every control plane started appends
// one line (the program that started it and the API server's URL), so that
// a test run can count them; `make test` sets it.
const StartLogEnv = "WASCHED_CONTROL_PLANE_LOG"

// recordStart appends the start of a control plane at host to the file
// StartLogEnv names, if any. One write per line (O_APPEND), so lines of
// concurrent processes never interleave; a failure to write is ignored,
// as it changes nothing the control plane does.
func recordStart(host string) {
	path := os.Getenv(StartLogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s %s\n", filepath.Base(os.Args[0]), host)
}

// waitReady polls /readyz until it answers ok, the server fails or the
// timeout passes.
func (cp *ControlPlane) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		return err
	}
	var last error
	poll := func(ctx context.Context) (bool, error) {
		select {
		case err, ok := <-cp.stopped:
			if ok && err != nil {
				return false, fmt.Errorf("kube-apiserver stopped while starting: %w", err)
			}
			return false, errors.New("kube-apiserver stopped while starting")
		default:
		}
		result := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx)
		if last = result.Error(); last != nil {
			return false, nil
		}
		return true, nil
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, poll)
	if err != nil && last != nil && ctx.Err() == nil {
		return fmt.Errorf("kube-apiserver was not ready within %s: %w", timeout, last)
	}
	return err
}

// Host is the API server's URL (https://127.0.0.1:PORT).
func (cp *ControlPlane) Host() string { return cp.host }

// Dir is the state directory (etcd data, certificates); Stop removes it.
func (cp *ControlPlane) Dir() string { return cp.dir }

// RestConfig is an administrator's client configuration (client
// certificate in group system:masters), without client-side rate limits.
func (cp *ControlPlane) RestConfig() *rest.Config {
	return &rest.Config{
		Host: cp.host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.pki.caPEM,
			CertData: cp.pki.adminPEM,
			KeyData:  cp.pki.adminKeyPEM,
		},
		QPS:   -1,
		Burst: 0,
	}
}

// Kubeconfig is a kubeconfig file for RestConfig: any client, kubectl
// included, can use it while the control plane runs.
func (cp *ControlPlane) Kubeconfig() ([]byte, error) {
	config := clientcmdapi.NewConfig()
	config.Clusters["wasched"] = &clientcmdapi.Cluster{
		Server:                   cp.host,
		CertificateAuthorityData: cp.pki.caPEM,
	}
	config.AuthInfos["wasched-admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cp.pki.adminPEM,
		ClientKeyData:         cp.pki.adminKeyPEM,
	}
	config.Contexts["wasched"] = &clientcmdapi.Context{Cluster: "wasched", AuthInfo: "wasched-admin"}
	config.CurrentContext = "wasched"
	return clientcmd.Write(*config)
}

// Stop shuts the API server down, then etcd, and removes the state
// directory. It is safe to call more than once.
func (cp *ControlPlane) Stop() {
	if cp == nil {
		return
	}
	if cp.cancel != nil {
		cp.cancel()
		cp.cancel = nil
	}
	if cp.stopped != nil {
		select {
		case <-cp.stopped:
		case <-time.After(30 * time.Second):
		}
		cp.stopped = nil
	}
	if cp.etcd != nil {
		cp.etcd.Close()
		cp.etcd = nil
	}
	if cp.dir != "" {
		os.RemoveAll(cp.dir)
		cp.dir = ""
	}
}
