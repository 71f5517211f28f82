package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"example.invalid/wasched/kube/controlplane"
)

// binary is this command, built once for the tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasched-kube-scheduler-")
	if err != nil {
		panic(err)
	}
	// Anyone may run it: a test runs it as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kube-scheduler")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building kube-scheduler: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// deploy is a path under deploy/.
func deploy(elem ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "deploy"}, elem...)...)
}

// startCluster starts a control plane and writes its kubeconfig.
func startCluster(t *testing.T) (*controlplane.ControlPlane, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	kubeconfig, err := cp.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return cp, path
}

// sampleConfig is deploy/kube-scheduler/base/config.yaml, to run out of
// a cluster: with a kubeconfig and without leader election.
func sampleConfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	text, err := os.ReadFile(deploy("kube-scheduler", "base", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(text), "leaderElect: true", "leaderElect: false", 1)
	config = strings.Replace(config, "kind: KubeSchedulerConfiguration\n",
		fmt.Sprintf("kind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: %s}\n", kubeconfig), 1)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTheBinaryRunsTheSampleOnARealCluster starts the built kube-scheduler
// with the sample configuration against a real API server and waits for
// it to bind a gang through the bundled components.
func TestTheBinaryRunsTheSampleOnARealCluster(t *testing.T) {
	cp, kubeconfig := startCluster(t)
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--config", sampleConfig(t, kubeconfig),
		"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
		"--secure-port=0")
	logs, err := os.Create(filepath.Join(t.TempDir(), "kube-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			text, _ := os.ReadFile(logs.Name())
			t.Logf("kube-scheduler's log:\n%s", text)
		}
	}()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: v1.NodeStatus{
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")},
		Capacity:    v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")},
		Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
	}}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = node.Status
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		group := "pair"
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pair-%d", i), Namespace: "default"},
			Spec: v1.PodSpec{SchedulerName: "wasched-kube-scheduler",
				SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: &group},
				Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The group's PodGroup comes last: the gang component holds its pods
	// until it exists. A lone pod created after them is the signal that
	// kube-scheduler has taken them in: its queue runs PreEnqueue as each
	// pod arrives, in order, so once the lone pod is bound the pair has
	// been held, not merely not yet seen.
	lone := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lone", Namespace: "default"},
		Spec: v1.PodSpec{SchedulerName: "wasched-kube-scheduler",
			Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, lone, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	boundPod := func(name string) bool {
		p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != ""
	}
	for !boundPod("lone") {
		if ctx.Err() != nil {
			t.Fatalf("the lone pod created after the pair was not bound: %v", ctx.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
	bound := func() int {
		n := 0
		for i := 0; i < 2; i++ {
			if boundPod(fmt.Sprintf("pair-%d", i)) {
				n++
			}
		}
		return n
	}
	if n := bound(); n != 0 {
		t.Fatalf("%d pods bound before their PodGroup existed", n)
	}
	if err := createPodGroup(ctx, cp, "pair", 2, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for bound() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the gang was not bound within 60s (%d of 2)", bound())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestABadComponentStopsItWithOneLine: a file that is not a component
// makes kube-scheduler refuse to start, with one line naming the file.
func TestABadComponentStopsItWithOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.wasm")
	if err := os.WriteFile(bad, []byte("not a component"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ component, want string }{
		{bad, bad + ": not a WebAssembly file"},
		{filepath.Join(dir, "missing.wasm"), filepath.Join(dir, "missing.wasm") + ": cannot read"},
	} {
		config := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: %s}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
  plugins:
    filter: {enabled: [{name: MyPlugin}]}
  pluginConfig:
  - name: MyPlugin
    args: {component: %s}
`, kubeconfig, tc.component)), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(binary, "--config", config, "--secure-port=0").CombinedOutput()
		if err == nil {
			t.Fatalf("%s: kube-scheduler started", tc.component)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, `initializing plugin \"MyPlugin\": `+tc.want) {
			t.Errorf("%s: last line %q, want it to name the file: %s", tc.component, last, tc.want)
		}
	}
}

// createPodGroup creates a gang PodGroup of a priority class ("": none).
func createPodGroup(ctx context.Context, cp *controlplane.ControlPlane, name string, min int, priorityClass string) error {
	client, err := kubernetes.NewForConfig(cp.RestConfig())
	if err != nil {
		return err
	}
	group := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: priorityClass, SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(min)}}}}
	_, err = client.SchedulingV1beta1().PodGroups("default").Create(ctx, group, metav1.CreateOptions{})
	return err
}
