// Command wasched-kube runs a real Kubernetes v1.37 control plane (embedded
// etcd and kube-apiserver) and, on request, the real kube-scheduler, in one
// process on loopback, with its state in a temporary directory removed at
// exit. wasched's `cluster up` and `simulate --engine kube-scheduler` drive
// it; it can be run by hand as well.
//
//	wasched-kube up --kubeconfig FILE [--objects FILE] [--with-kube-scheduler] [--config FILE] [--port N]
//	wasched-kube schedule --objects FILE [--config FILE] [--timeout D] [--ties]
//
// `up` starts the control plane, creates the objects (a JSON List in
// creation order, statuses included), writes a kubeconfig, prints one line
// when ready and runs until SIGINT or SIGTERM. `schedule` creates the
// objects, only then starts kube-scheduler, waits until it is quiet and
// prints its decisions as JSON on stdout.
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
	"k8s.io/klog/v2"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"example.invalid/wasched/kube/controlplane"
	"example.invalid/wasched/kube/engine"
	"example.invalid/wasched/kube/objects"
)

const usage = `usage:
  wasched-kube up --kubeconfig FILE [--objects FILE] [--with-kube-scheduler] [--config FILE] [--port N] [--log FILE]
  wasched-kube schedule --objects FILE [--config FILE] [--timeout DURATION] [--settle DURATION] [--ties] [--log FILE]
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
}

func (c *common) register(flags *flag.FlagSet) {
	flags.StringVar(&c.objects, "objects", "", "JSON List of the objects to create, in creation order")
	flags.BoolVar(&c.deleteObjects, "delete-objects", false, "remove the --objects file once read")
	flags.StringVar(&c.config, "config", "", "KubeSchedulerConfiguration file (default: upstream's default profile, percentageOfNodesToScore 100)")
	flags.StringVar(&c.log, "log", "", "write the control plane's and scheduler's logs to FILE (default: discarded)")
}

// prepare reads what the command needs before anything starts, so that
// bad input fails before a server runs.
func (c *common) prepare() ([]*unstructured.Unstructured, *schedconfig.KubeSchedulerConfiguration, error) {
	if err := quietLogs(c.log); err != nil {
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
	config, err := engine.LoadConfig(data)
	if err != nil && c.config != "" {
		err = fmt.Errorf("%s: %w", c.config, err)
	}
	return items, config, err
}

func quietLogs(path string) error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
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

func startAndLoad(ctx context.Context, port int, items []*unstructured.Unstructured) (*controlplane.ControlPlane, *objects.Loaded, error) {
	cp, err := controlplane.Start(ctx, controlplane.Options{Port: port})
	if err != nil {
		return nil, nil, fmt.Errorf("the control plane cannot start: %w", err)
	}
	loader, err := objects.NewLoader(cp.RestConfig())
	if err != nil {
		cp.Stop()
		return nil, nil, err
	}
	loaded, err := loader.Load(ctx, items)
	if err != nil {
		cp.Stop()
		return nil, nil, err
	}
	return cp, loaded, nil
}

func up(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("up", flag.ContinueOnError)
	var c common
	c.register(flags)
	kubeconfig := flags.String("kubeconfig", "", "write the administrator's kubeconfig to FILE (required)")
	withScheduler := flags.Bool("with-kube-scheduler", false, "also run kube-scheduler v1.37 with the workload gates")
	port := flags.Int("port", 0, "API server port on 127.0.0.1 (default: a free one)")
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
	cp, loaded, err := startAndLoad(ctx, *port, items)
	if err != nil {
		return err
	}
	defer cp.Stop()
	data, err := cp.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("cannot write the kubeconfig: %w", err)
	}
	what := "no kube-scheduler"
	if *withScheduler {
		sched, err := engine.Start(ctx, cp.RestConfig(), engine.Options{Config: config})
		if err != nil {
			return err
		}
		defer sched.Stop()
		what = "kube-scheduler v1.37.2 running (" + controlplane.GatesFlag() + ")"
	}
	fmt.Printf("ready: kube-apiserver v1.37.2 at %s, %d object(s) loaded, %s; kubeconfig %s (stop with Ctrl-C)\n",
		cp.Host(), len(loaded.Objects), what, *kubeconfig)
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
	if err := flags.Parse(args); err != nil {
		return err
	}
	if c.objects == "" {
		return errors.New("schedule: --objects FILE is required")
	}
	items, config, err := c.prepare()
	if err != nil {
		return err
	}
	cp, loaded, err := startAndLoad(ctx, 0, items)
	if err != nil {
		return err
	}
	defer cp.Stop()
	sched, err := engine.Start(ctx, cp.RestConfig(), engine.Options{Config: config, Ties: *ties})
	if err != nil {
		return err
	}
	defer sched.Stop()
	if err := sched.WaitQuiet(ctx, *timeout, *settle); err != nil {
		return err
	}
	result, err := sched.Result(ctx, cp.RestConfig())
	if err != nil {
		return err
	}
	output := struct {
		Loaded int `json:"loaded"`
		*engine.Result
	}{len(loaded.Objects), result}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	return encoder.Encode(output)
}
