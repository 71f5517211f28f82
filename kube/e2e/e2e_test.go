// Package e2e runs the wasched-kube binary as its users do: built into a
// directory of its own (so nothing may depend on the module cache's source
// paths at run time), started on the fixtures in ../testdata, stopped with
// a signal, and checked through the API server with a real client.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// binary is wasched-kube, built by TestMain into a temporary directory.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasched-kube-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "wasched-kube")
	// The control planes started here keep their state in a temporary
	// directory of this package's own, so that stateDirs does not count
	// those of the packages tested beside it.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		panic(err)
	}
	os.Setenv("TMPDIR", tmp)
	build := exec.Command("go", "build", "-o", binary, "example.invalid/wasched/kube/cmd/wasched-kube")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building wasched-kube: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func fixture(name string) string {
	path, err := filepath.Abs(filepath.Join("..", "testdata", name))
	if err != nil {
		panic(err)
	}
	return path
}

// stateDirs counts the control planes' state directories in the package's
// temporary directory.
func stateDirs(t *testing.T) int {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), "wasched-kube-[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(matches)
}

// Result is the part of `schedule`'s output the tests read.
type Result struct {
	Loaded int `json:"loaded"`
	Pods   []struct {
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Node        string `json:"node"`
		Deleted     bool   `json:"deleted"`
		PreemptedBy string `json:"preemptedBy"`
		Disruption  *struct {
			Reason string `json:"reason"`
		} `json:"disruption"`
		BoundOrder int `json:"boundOrder"`
		Tie        *struct {
			Choices []string `json:"choices"`
		} `json:"tie"`
	} `json:"pods"`
	PodGroups []struct {
		Name       string `json:"name"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"podGroups"`
	Stats struct {
		Cycles   int     `json:"cycles"`
		Finished int     `json:"finished"`
		Quiet    float64 `json:"quietSeconds"`
	} `json:"stats"`
}

func schedule(t *testing.T, args ...string) (Result, string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"schedule"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var result Result
	if err == nil {
		if err := json.Unmarshal([]byte(stdout.String()), &result); err != nil {
			t.Fatalf("schedule printed something else than its result: %v\n%s", err, stdout.String())
		}
	}
	return result, stderr.String(), err
}

// TestGangPreemptsThroughTheRealScheduler: a gang that fits only by
// preemption evicts both low-priority pods (DisruptionTarget, deleted in
// place of a kubelet) and binds, the PDB allowing one disruption being
// violated as kube-scheduler allows when nothing else fits.
func TestGangPreemptsThroughTheRealScheduler(t *testing.T) {
	before := stateDirs(t)
	result, stderr, err := schedule(t, "--objects", fixture("preempt-gang.json"))
	if err != nil {
		t.Fatalf("schedule: %v\n%s", err, stderr)
	}
	if result.Loaded != 11 {
		t.Errorf("loaded %d objects, want 11", result.Loaded)
	}
	nodes := map[string]string{}
	for _, p := range result.Pods {
		switch {
		case strings.HasPrefix(p.Name, "low-"):
			if !p.Deleted || p.Disruption == nil || p.Disruption.Reason != "PreemptionByScheduler" || p.PreemptedBy != "PodGroup team/trainer" {
				t.Errorf("victim %s: deleted %v, disruption %v, preempted by %q", p.Name, p.Deleted, p.Disruption, p.PreemptedBy)
			}
		case strings.HasPrefix(p.Name, "trainer-"):
			if p.Node == "" || p.BoundOrder == 0 {
				t.Errorf("%s not bound", p.Name)
			}
			nodes[p.Node] = p.Name
		}
	}
	if len(nodes) != 2 {
		t.Errorf("the gang is not on both nodes: %v", nodes)
	}
	if result.Stats.Finished != 2 {
		t.Errorf("the harness finished %d terminating pods, want 2", result.Stats.Finished)
	}
	if len(result.PodGroups) != 1 || len(result.PodGroups[0].Conditions) == 0 {
		t.Fatalf("podGroups: %+v", result.PodGroups)
	}
	if after := stateDirs(t); after != before {
		t.Errorf("%d state directories left behind", after-before)
	}
}

// TestTiesAreReportedAndBrokenAsPreferred: a pod with two equally good
// nodes lands where --prefer says, and its tie class names both.
func TestTiesAreReportedAndBrokenAsPreferred(t *testing.T) {
	dir := t.TempDir()
	for _, node := range []string{"node-0", "node-1"} {
		prefer := filepath.Join(dir, node+".json")
		data := fmt.Sprintf(`{"nodes": {"team/lone": %q}, "groups": {}}`, node)
		if err := os.WriteFile(prefer, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		result, stderr, err := schedule(t, "--objects", fixture("tie.json"), "--ties", "--prefer", prefer)
		if err != nil {
			t.Fatalf("schedule: %v\n%s", err, stderr)
		}
		if len(result.Pods) != 1 || result.Pods[0].Node != node {
			t.Fatalf("prefer %s: %+v", node, result.Pods)
		}
		tie := result.Pods[0].Tie
		if tie == nil || strings.Join(tie.Choices, ",") != "node-0,node-1" {
			t.Errorf("tie class %+v, want both nodes", tie)
		}
	}
}

// TestRefusedObjectIsOneLineAndNothingIsLeft: the API server's own message,
// the object's name, exit status 1, no control plane left.
func TestRefusedObjectIsOneLineAndNothingIsLeft(t *testing.T) {
	before := stateDirs(t)
	_, stderr, err := schedule(t, "--objects", fixture("refused.json"))
	if err == nil {
		t.Fatal("schedule accepted a pod the API server refuses")
	}
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Errorf("exit: %v", err)
	}
	line := strings.TrimSpace(stderr)
	if strings.Count(line, "\n") != 0 ||
		!strings.HasPrefix(line, "wasched-kube: Pod team/bare-priority: the API server refused to create it: ") ||
		!strings.Contains(line, "must not be provided in pod spec") {
		t.Errorf("stderr: %q", stderr)
	}
	if after := stateDirs(t); after != before {
		t.Errorf("%d state directories left behind", after-before)
	}
	_, stderr, err = schedule(t, "--objects", fixture("tie.json"), "--config", fixture("refused.json"))
	if err == nil || !strings.Contains(stderr, "not a KubeSchedulerConfiguration") {
		t.Errorf("a bad configuration: %v %q", err, stderr)
	}
}

// TestUpServesAClusterUntilStopped: `up --with-kube-scheduler` prints one
// ready line, a client of its kubeconfig sees the objects (statuses written
// back) and the scheduler's binding, and SIGTERM stops it cleanly.
func TestUpServesAClusterUntilStopped(t *testing.T) {
	before := stateDirs(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cmd := exec.Command(binary, "up", "--objects", fixture("preempt-gang.json"), "--kubeconfig", kubeconfig, "--with-kube-scheduler")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	ready := make(chan string, 1)
	go func() {
		if lines.Scan() {
			ready <- lines.Text()
		}
		close(ready)
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no ready line; stderr: %s", stderr.String())
	}
	if !strings.HasPrefix(line, "ready: kube-apiserver v1.37.2 at https://127.0.0.1:") || !strings.Contains(line, "11 object(s) loaded") {
		t.Fatalf("ready line %q; stderr %s", line, stderr.String())
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	budget, err := client.PolicyV1().PodDisruptionBudgets("team").Get(ctx, "low", metav1.GetOptions{})
	if err != nil || budget.Status.DisruptionsAllowed != 1 || budget.Status.ExpectedPods != 2 {
		t.Errorf("PDB status not written back: %+v, %v", budget.Status, err)
	}
	// The trainer gang preempts and binds; wait for it.
	deadline := time.Now().Add(time.Minute)
	for {
		bound := 0
		for _, name := range []string{"trainer-0", "trainer-1"} {
			pod, err := client.CoreV1().Pods("team").Get(ctx, name, metav1.GetOptions{})
			if err == nil && pod.Spec.NodeName != "" {
				bound++
			}
		}
		if bound == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gang was not bound within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("up after SIGTERM: %v; stderr %s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("up did not stop within a minute of SIGTERM")
	}
	if after := stateDirs(t); after != before {
		t.Errorf("%d state directories left behind", after-before)
	}
}

// TestUpWithoutASchedulerKeepsStatusesAndTime: `up` without a scheduler
// holds the snapshot as it was (the running pods Running with their start
// time); with --lifecycle and --job-controller, a Job's pod, once bound
// (here by the test, as a scheduler would), runs for its run-for
// annotation and the Job completes.
func TestUpWithoutASchedulerKeepsStatusesAndTime(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cmd := exec.Command(binary, "up", "--objects", fixture("preempt-gang.json"), "--kubeconfig", kubeconfig,
		"--lifecycle", "--job-controller")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), "no kube-scheduler, the Job controller running, pods keeping time") {
		t.Fatalf("ready line %q; stderr %s", lines.Text(), stderr.String())
	}
	config, _ := clientcmd.BuildConfigFromFlags("", kubeconfig)
	client := kubernetes.NewForConfigOrDie(config)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pod, err := client.CoreV1().Pods("team").Get(ctx, "low-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != "Running" || pod.Status.StartTime == nil || pod.Status.StartTime.UTC().Format(time.RFC3339) != "2026-11-20T09:00:00Z" {
		t.Errorf("low-0 status: phase %s, start %v", pod.Status.Phase, pod.Status.StartTime)
	}
	trainer, err := client.CoreV1().Pods("team").Get(ctx, "trainer-0", metav1.GetOptions{})
	if err != nil || trainer.Spec.NodeName != "" || trainer.Spec.Priority == nil || *trainer.Spec.Priority != 1000 {
		t.Errorf("trainer-0: %v, node %q, priority %v", err, trainer.Spec.NodeName, trainer.Spec.Priority)
	}

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "team"},
		Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"wasched.io/run-for": "1s"}},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever,
				Containers: []v1.Container{{Name: "main", Image: "busybox"}}},
		}},
	}
	if _, err := client.BatchV1().Jobs("team").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var created *v1.Pod
	for created == nil {
		list, err := client.CoreV1().Pods("team").List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=batch"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			created = &list.Items[0]
		} else if ctx.Err() != nil {
			t.Fatal("the Job controller created no pod")
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	binding := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: created.Name, Namespace: "team", UID: created.UID},
		Target: v1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := client.CoreV1().Pods("team").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := client.BatchV1().Jobs("team").Get(ctx, "batch", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Succeeded == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the Job did not complete: %+v", got.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
