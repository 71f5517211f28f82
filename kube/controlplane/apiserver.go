package controlplane

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// firstServiceIP is the first address of the service range below, which
// the serving certificate names (as the `kubernetes` Service's IP).
const firstServiceIP = "10.0.0.1"

// disabledAdmission are the default-on admission plugins that need a
// controller or a kubelet this control plane does not run, or that would
// change objects a snapshot already holds as its own cluster admitted them:
//   - ServiceAccount: no token controller creates `default` ServiceAccounts;
//   - TaintNodesByCondition: no node controller lifts the not-ready taint
//     it puts on every new Node;
//   - PodGroupProtection, StorageObjectInUseProtection: finalizers no
//     controller removes;
//   - DefaultTolerationSeconds: adds not-ready/unreachable tolerations to
//     pods that their own cluster already admitted.
//
// Priority stays on: priorityClassName resolves to spec.priority as in a
// real cluster, for pods, PodGroups and CompositePodGroups.
var disabledAdmission = []string{
	"ServiceAccount",
	"TaintNodesByCondition",
	"PodGroupProtection",
	"StorageObjectInUseProtection",
	"DefaultTolerationSeconds",
}

// runtimeConfig serves the workload APIs next to the default groups.
const runtimeConfig = "scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true"

// startAPIServer runs the real kube-apiserver in this process on listener,
// storing in etcd at etcdURL, with the certificates of p. It returns when
// the server is built; errors of the running server arrive on the channel,
// which is closed when the server has stopped.
func startAPIServer(ctx context.Context, listener net.Listener, etcdURL, dir string, p *pki) (<-chan error, error) {
	s := options.NewServerRunOptions()
	flags := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, set := range s.Flags().FlagSets {
		flags.AddFlagSet(set)
	}
	address := listener.Addr().(*net.TCPAddr)
	s.SecureServing.Listener = listener
	s.SecureServing.BindAddress = address.IP
	s.SecureServing.BindPort = address.Port
	s.SecureServing.ExternalAddress = address.IP
	s.SecureServing.ServerCert.CertDirectory = dir
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--advertise-address=" + address.IP.String(),
		"--tls-cert-file=" + p.servingFile,
		"--tls-private-key-file=" + p.servingKeyFile,
		"--client-ca-file=" + p.caFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-signing-key-file=" + p.serviceKeyFile,
		"--service-account-key-file=" + p.serviceKeyFile,
		"--service-cluster-ip-range=10.0.0.0/16",
		"--endpoint-reconciler-type=none",
		"--authorization-mode=RBAC",
		"--anonymous-auth=false",
		"--disable-admission-plugins=" + strings.Join(disabledAdmission, ","),
		"--runtime-config=" + runtimeConfig,
		"--profiling=false",
	}
	if err := flags.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	if err := compatibility.DefaultComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-apiserver feature gates: %w", err)
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	config, err := app.NewConfig(completed)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver configuration: %w", err)
	}
	completedConfig, err := config.Complete()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver configuration: %w", err)
	}
	server, err := app.CreateServerChain(completedConfig)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	stopped := make(chan error, 1)
	go func() {
		defer close(stopped)
		if err := prepared.Run(ctx); err != nil {
			stopped <- err
		}
	}()
	return stopped, nil
}
