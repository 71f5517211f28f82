// Command wasched-kube runs a real Kubernetes v1.37 control plane (embedded
// etcd and kube-apiserver) and, on request, the real kube-scheduler, in one
// process on loopback, with its state in a temporary directory removed at
// exit. wasched's `cluster up` and `simulate --engine kube-scheduler` drive
// it; it can be run by hand as well.
//
//	wasched-kube up --kubeconfig FILE [--objects FILE] [--with-kube-scheduler] [--config FILE] [--wasm [--wasm-plugins DIR]] [--port N] [--lifecycle] [--job-controller]
//	wasched-kube schedule --objects FILE [--config FILE] [--wasm [--wasm-plugins DIR]] [--timeout D] [--ties]
//	wasched-kube play --objects FILE --trace FILE [--config FILE] [--wasm [--wasm-plugins DIR]] [--until D] [--prefer FILE]
//
// `up` starts the control plane, creates the objects (a JSON List in
// creation order, statuses included), writes a kubeconfig, prints one line
// when ready and runs until SIGINT or SIGTERM; it stands in for kubelets
// (a pod marked for deletion is deleted at once, as if its containers had
// stopped; with --lifecycle pods keep a node's time instead, see package
// kubelet) and, with --job-controller, runs upstream's Job controller
// (package jobcontroller). `schedule` creates the
// objects, only then starts kube-scheduler, waits until it is quiet and
// prints its decisions as JSON on stdout. With --wasm, kube-scheduler runs
// wasched's components (package wasmplugin) in place of the in-tree
// workload plugins. `play` runs a trace in real time: kube-scheduler with
// its own backoff, pods keeping time and the Job controller, each object
// of the trace created at its wasched.io/submit-at annotation; once every
// Job has finished it prints what happened to each pod and Job as JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"example.invalid/wasched/kube/controlplane"
	"example.invalid/wasched/kube/engine"
	"example.invalid/wasched/kube/jobcontroller"
	"example.invalid/wasched/kube/kubelet"
	"example.invalid/wasched/kube/objects"
	"example.invalid/wasched/kube/wasmplugin"
)

const usage = `usage:
  wasched-kube up --kubeconfig FILE [--objects FILE] [--with-kube-scheduler] [--config FILE] [--wasm [--wasm-plugins DIR]] [--port N] [--lifecycle] [--job-controller] [--log FILE]
  wasched-kube schedule --objects FILE [--config FILE] [--wasm [--wasm-plugins DIR]] [--timeout DURATION] [--settle DURATION] [--ties] [--prefer FILE] [--log FILE]
  wasched-kube play --objects FILE --trace FILE [--config FILE] [--wasm [--wasm-plugins DIR]] [--until DURATION] [--prefer FILE] [--log FILE]
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "up":
		err = up(ctx, os.Args[2:])
	case "schedule":
		err = schedule(ctx, os.Args[2:])
	case "play":
		err = play(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		err = fmt.Errorf("unknown command %q\n%s", os.Args[1], usage)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(os.Stderr, "wasched-kube: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
}

// common are the flags both commands take.
type common struct {
	objects       string
	deleteObjects bool
	config        string
	log           string
	verbosity     int
	featureGates  string
	wasm          bool
	wasmPlugins   string
	// plugins are the components of --wasm, registered (nil without).
	plugins frameworkruntime.Registry
}

func (c *common) register(flags *flag.FlagSet) {
	flags.StringVar(&c.objects, "objects", "", "JSON List of the objects to create, in creation order")
	flags.BoolVar(&c.deleteObjects, "delete-objects", false, "remove the --objects file once read")
	flags.StringVar(&c.config, "config", "", "KubeSchedulerConfiguration file (default: upstream's default profile, percentageOfNodesToScore 100)")
	flags.StringVar(&c.log, "log", "", "write the control plane's and scheduler's logs to FILE (default: discarded)")
	flags.IntVar(&c.verbosity, "v", 0, "log verbosity (klog -v) of --log")
	flags.StringVar(&c.featureGates, "feature-gates", "", "change the control plane's feature gates (Name=true,Other=false; default: the workload gates on)")
	flags.BoolVar(&c.wasm, "wasm", false, "run wasched's components inside kube-scheduler (the bundled ones, enabled at the points they export in place of the in-tree workload plugins, unless --config says otherwise)")
	flags.StringVar(&c.wasmPlugins, "wasm-plugins", "", "with --wasm: the *.wasm components of DIR instead of the bundled ones")
}

// prepare reads what the command needs before anything starts, so that
// bad input fails before a server runs.
func (c *common) prepare() ([]*unstructured.Unstructured, *schedconfig.KubeSchedulerConfiguration, error) {
	if err := quietLogs(c.log, c.verbosity); err != nil {
		return nil, nil, err
	}
	if err := controlplane.OverrideGates(c.featureGates); err != nil {
		return nil, nil, err
	}
	if err := controlplane.SetFeatureGates(); err != nil {
		return nil, nil, err
	}
	var items []*unstructured.Unstructured
	if c.objects != "" {
		var err error
		items, err = objects.ReadFile(c.objects)
		if c.deleteObjects {
			os.Remove(c.objects)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.objects, err)
		}
	}
	var data []byte
	if c.config != "" {
		var err error
		if data, err = os.ReadFile(c.config); err != nil {
			return nil, nil, err
		}
	}
	if c.wasmPlugins != "" && !c.wasm {
		return nil, nil, errors.New("--wasm-plugins needs --wasm")
	}
	if c.wasm {
		components, err := wasmplugin.Load(c.wasmPlugins)
		if err != nil {
			return nil, nil, err
		}
		c.plugins = components.Registry
		if c.config == "" {
			data = []byte(engine.DefaultConfig + components.Plugins())
		}
	}
	config, err := engine.LoadConfig(data)
	if err != nil && c.config != "" {
		err = fmt.Errorf("%s: %w", c.config, err)
	}
	return items, config, err
}

func quietLogs(path string, verbosity int) error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", fmt.Sprint(verbosity))
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	var out io.Writer = io.Discard
	if path != "" {
		file, err := os.Create(path)
		if err != nil {
			return err
		}
		out = file
	}
	klog.SetOutput(out)
	return nil
}

// cluster is a running control plane with a snapshot's objects and,
// when asked, kube-scheduler.
type cluster struct {
	cp     *controlplane.ControlPlane
	sched  *engine.Scheduler
	loaded int
}

func (c *cluster) stop() {
	c.sched.Stop()
	c.cp.Stop()
}

// startCluster starts the control plane and creates the objects. With a
// scheduler, the pending pods are created after it has synced, one at a
// time in the order given (their snapshot's creation order), and
// scheduling starts once its queue holds them all: it sees the whole set
// at once, in the order a live cluster would have shown it.
func startCluster(ctx context.Context, port int, items []*unstructured.Unstructured, scheduler *engine.Options, standIn kubelet.Options) (c *cluster, err error) {
	c = &cluster{}
	if c.cp, err = controlplane.Start(ctx, controlplane.Options{Port: port}); err != nil {
		return nil, fmt.Errorf("the control plane cannot start: %w", err)
	}
	defer func() {
		if err != nil {
			c.stop()
			c = nil
		}
	}()
	loader, err := objects.NewLoader(c.cp.RestConfig())
	if err != nil {
		return c, err
	}
	if scheduler == nil {
		// No kube-scheduler (and its harness watch) here: stand in for the
		// kubelets, so that pods being deleted go (another scheduler's
		// preemption victims among them).
		client, err := kubernetes.NewForConfig(c.cp.RestConfig())
		if err != nil {
			return c, err
		}
		loaded, err := loader.Load(ctx, items)
		if err != nil {
			return c, err
		}
		c.loaded = len(loaded.Objects)
		// Started once the objects hold their statuses: with Lifecycle, a
		// bound pod written before its status would be started anew.
		if err := kubelet.Run(ctx, client, standIn); err != nil {
			return c, err
		}
		return c, nil
	}
	rest, pending := objects.Pending(items)
	loaded, err := loader.Load(ctx, rest)
	if err != nil {
		return c, err
	}
	if c.sched, err = engine.New(ctx, c.cp.RestConfig(), *scheduler); err != nil {
		return c, err
	}
	queued, err := loader.LoadInOrder(ctx, pending)
	if err != nil {
		return c, err
	}
	if err := c.sched.Queued(ctx, queued.Objects); err != nil {
		return c, err
	}
	c.loaded = len(loaded.Objects) + len(queued.Objects)
	c.sched.Run()
	return c, nil
}

func up(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("up", flag.ContinueOnError)
	var c common
	c.register(flags)
	kubeconfig := flags.String("kubeconfig", "", "write the administrator's kubeconfig to FILE (required)")
	withScheduler := flags.Bool("with-kube-scheduler", false, "also run kube-scheduler v1.37 with the workload gates")
	port := flags.Int("port", 0, "API server port on 127.0.0.1 (default: a free one)")
	lifecycle := flags.Bool("lifecycle", false, "pods keep a node's time: bound pods start, succeed after their "+kubelet.RunForAnnotation+" annotation, and stay terminating for their grace period")
	jobController := flags.Bool("job-controller", false, "run upstream's Job controller (with WorkloadWithJob: each Job's Workload and PodGroup)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("up: --kubeconfig FILE is required")
	}
	items, config, err := c.prepare()
	if err != nil {
		return err
	}
	var scheduler *engine.Options
	what := "no kube-scheduler"
	if *withScheduler {
		// A cluster people use: kube-scheduler's own backoff.
		scheduler = &engine.Options{Config: config, Plugins: c.plugins, UpstreamBackoff: true, Lifecycle: *lifecycle}
		what = "kube-scheduler v1.37.2 running (" + controlplane.GatesFlag() + ")"
	}
	running, err := startCluster(ctx, *port, items, scheduler, kubelet.Options{Lifecycle: *lifecycle})
	if err != nil {
		return err
	}
	defer running.stop()
	if *jobController {
		if err := jobcontroller.Run(ctx, running.cp.RestConfig()); err != nil {
			return err
		}
		what += ", the Job controller running"
	}
	if *lifecycle {
		what += ", pods keeping time (--lifecycle)"
	}
	data, err := running.cp.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("cannot write the kubeconfig: %w", err)
	}
	fmt.Printf("ready: kube-apiserver v1.37.2 at %s, %d object(s) loaded, %s; kubeconfig %s (stop with Ctrl-C)\n",
		running.cp.Host(), running.loaded, what, *kubeconfig)
	<-ctx.Done()
	return nil
}

func schedule(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("schedule", flag.ContinueOnError)
	var c common
	c.register(flags)
	timeout := flags.Duration("timeout", 5*time.Minute, "give up when kube-scheduler is not quiet within DURATION")
	settle := flags.Duration("settle", 500*time.Millisecond, "quiet must hold this long, with no new cycle")
	ties := flags.Bool("ties", false, "report the top score class of every binding")
	preferFile := flags.String("prefer", "", "break kube-scheduler's ties toward the choices in FILE (JSON: nodes, groups, jobs)")
	upstreamBackoff := flags.Bool("upstream-backoff", false, "leave preemptors to their backoff (default: each cycle waits for the last one's preemptions to settle and retries their preemptors first, so that timing does not decide)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	var prefer *engine.Preferences
	if *preferFile != "" {
		var err error
		if prefer, err = engine.ReadPreferences(*preferFile); err != nil {
			return err
		}
	}
	if c.objects == "" {
		return errors.New("schedule: --objects FILE is required")
	}
	items, config, err := c.prepare()
	if err != nil {
		return err
	}
	running, err := startCluster(ctx, 0, items, &engine.Options{Config: config, Plugins: c.plugins, Ties: *ties, Prefer: prefer, UpstreamBackoff: *upstreamBackoff}, kubelet.Options{})
	if err != nil {
		return err
	}
	defer running.stop()
	if err := running.sched.WaitQuiet(ctx, *timeout, *settle); err != nil {
		return err
	}
	result, err := running.sched.Result(ctx, running.cp.RestConfig())
	if err != nil {
		return err
	}
	output := engine.Printed{Loaded: running.loaded, Result: *result}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	return encoder.Encode(output)
}
