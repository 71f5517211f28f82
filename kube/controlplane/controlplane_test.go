package controlplane

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestControlPlane starts the real kube-apiserver on embedded etcd and
// checks what the harness relies on: a kubeconfig any client can use, the
// workload APIs served, the system PriorityClasses, the gates, and a stop
// that leaves nothing behind.
func TestControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if os.Getenv(StartLogEnv) == "" {
		t.Setenv(StartLogEnv, filepath.Join(t.TempDir(), "starts"))
	}
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	// The start is counted in the file StartLogEnv names (make test's
	// summary counts these lines).
	if starts, err := os.ReadFile(os.Getenv(StartLogEnv)); err != nil || !strings.Contains(string(starts), " "+cp.Host()+"\n") {
		t.Errorf("%s does not record this start (%s): %q, %v", StartLogEnv, cp.Host(), starts, err)
	}
	dir := cp.Dir()
	if !strings.HasPrefix(cp.Host(), "https://127.0.0.1:") {
		t.Errorf("Host() = %q, want loopback https", cp.Host())
	}

	data, err := cp.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	config, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatalf("the kubeconfig does not load: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(config)
	if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("a client of the kubeconfig cannot read namespace default: %v", err)
	}
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		if _, err := client.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("PriorityClass %s: %v", name, err)
		}
	}
	for _, gv := range []string{"scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"} {
		resources, err := client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Errorf("%s is not served: %v", gv, err)
			continue
		}
		var names []string
		for _, r := range resources.APIResources {
			names = append(names, r.Name)
		}
		want := map[string][]string{
			"scheduling.k8s.io/v1beta1":  {"podgroups", "podgroups/status", "workloads"},
			"scheduling.k8s.io/v1alpha3": {"compositepodgroups", "compositepodgroups/status"},
		}[gv]
		for _, w := range want {
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+w+" ") {
				t.Errorf("%s serves %v, not %s", gv, names, w)
			}
		}
	}
	// The gates are on /metrics, as kube-apiserver exposes them.
	metrics, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	for name, on := range FeatureGates {
		want := "0"
		if on {
			want = "1"
		}
		found := false
		for _, line := range strings.Split(string(metrics), "\n") {
			if strings.HasPrefix(line, `kubernetes_feature_enabled{name="`+name+`"`) {
				found = strings.HasSuffix(line, " "+want)
			}
		}
		if !found {
			t.Errorf("/metrics does not say gate %s is %s", name, want)
		}
	}
	// Anonymous requests are refused: the admin certificate is the way in.
	anonymous := kubernetes.NewForConfigOrDie(rest.AnonymousClientConfig(config))
	if _, err := anonymous.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("an anonymous client could list namespaces")
	}

	cp.Stop()
	cp.Stop() // twice is fine
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state directory %s left behind: %v", dir, err)
	}
}

// TestPortInUse checks that a taken port is one clear error and leaves
// nothing running or on disk.
func TestPortInUse(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	port := listener.Addr().(*net.TCPAddr).Port
	// A temporary directory of the test's own, so that what Start leaves
	// is told apart from what tests running beside it keep there.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err = Start(context.Background(), Options{Port: port})
	if err == nil || !strings.Contains(err.Error(), "cannot listen on 127.0.0.1:") {
		t.Fatalf("Start on a used port: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Start left %d entries in %s", len(left), tmp)
	}
}

func TestGatesFlagIsSortedAndComplete(t *testing.T) {
	flag := GatesFlag()
	for name, on := range FeatureGates {
		want := name + "=false"
		if on {
			want = name + "=true"
		}
		if !strings.Contains(flag, want) {
			t.Errorf("GatesFlag() = %q lacks %s", flag, want)
		}
	}
	if !strings.HasPrefix(flag, "CompositePodGroup=true,") {
		t.Errorf("GatesFlag() = %q is not sorted", flag)
	}
}

func TestOverrideGates(t *testing.T) {
	saved := map[string]bool{}
	for name, on := range FeatureGates {
		saved[name] = on
	}
	defer func() { FeatureGates = saved }()
	if err := OverrideGates("TopologyAwareWorkloadScheduling=false, PodGroupPreemptionPolicy=false"); err != nil {
		t.Fatal(err)
	}
	if FeatureGates["TopologyAwareWorkloadScheduling"] || FeatureGates["PodGroupPreemptionPolicy"] {
		t.Errorf("gates not turned off: %v", FeatureGates)
	}
	if !FeatureGates["GenericWorkload"] {
		t.Errorf("a gate not named changed: %v", FeatureGates)
	}
	for _, bad := range []string{"GenericWorkload", "=true", "GenericWorkload=maybe"} {
		if err := OverrideGates(bad); err == nil || !strings.Contains(err.Error(), "--feature-gates") {
			t.Errorf("OverrideGates(%q) = %v, want an error naming --feature-gates", bad, err)
		}
	}
	if err := OverrideGates(""); err != nil {
		t.Errorf("OverrideGates(\"\") = %v", err)
	}
}
