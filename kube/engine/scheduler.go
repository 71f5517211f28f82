// Package engine runs the real kube-scheduler v1.37 in this process
// against a control plane, watches it until it has nothing left to do,
// and reads its decisions back.
package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"example.invalid/wasched/kube/kubelet"
	"example.invalid/wasched/kube/objects"
)

// Options of a run.
type Options struct {
	// Config is the KubeSchedulerConfiguration (nil: DefaultConfig).
	Config *schedconfig.KubeSchedulerConfiguration
	// Plugins are out-of-tree plugins the configuration may name.
	Plugins frameworkruntime.Registry
	// Ties asks for the top score class of every choice (costs memory).
	Ties bool
	// Prefer breaks ties toward these choices (see Preferences).
	Prefer *Preferences
	// UpstreamBackoff leaves preemptors to their backoff. Without it each
	// scheduling cycle waits for the last one's preemptions to be done and
	// moves their preemptors to the active queue (see preemptionGate), so that
	// runs decide the same whatever the timing.
	UpstreamBackoff bool
	// Lifecycle lets pods keep a node's time: the kubelet stand-in runs
	// beside kube-scheduler with kubelet.Options.Lifecycle (bound pods
	// start, complete after their run-for annotation, and stay
	// terminating for their grace period) instead of the harness's watch
	// finishing pods marked for deletion at once.
	Lifecycle bool
}

// Scheduler is kube-scheduler running in this process, with the harness's
// watch beside it.
type Scheduler struct {
	sched          *scheduler.Scheduler
	watch          *watch
	rec            *recorder
	names          map[string]bool
	cancel         context.CancelFunc
	done           chan struct{}
	started        time.Time
	popsMu         sync.Mutex
	popped         map[types.UID]uint64
	profiles       []string
	preemptionGate *preemptionGate

	runCtx      context.Context
	broadcaster events.EventBroadcaster
}

// New builds kube-scheduler from the configuration and waits for its
// informers to sync, without scheduling yet: pods created now enter its
// queue in the order they are created (see Queued), and Run starts the
// scheduling loop. Stop it with Stop.
func New(ctx context.Context, config *rest.Config, options Options) (*Scheduler, error) {
	cfg := options.Config
	if cfg == nil {
		var err error
		if cfg, err = LoadConfig(nil); err != nil {
			return nil, err
		}
	}
	clientConfig := rest.CopyConfig(config)
	clientConfig.QPS = cfg.ClientConnection.QPS
	clientConfig.Burst = int(cfg.ClientConnection.Burst)
	clientConfig.ContentType = cfg.ClientConnection.ContentType
	clientConfig.UserAgent = "kube-scheduler"
	client, err := kubernetes.NewForConfig(clientConfig)
	if err != nil {
		return nil, err
	}
	dynClient, err := dynamic.NewForConfig(clientConfig)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		watch:  newWatch(client, !options.Lifecycle),
		rec:    newRecorder(options.Ties, options.Prefer),
		names:  map[string]bool{},
		cancel: cancel,
		done:   make(chan struct{}),
		popped: map[types.UID]uint64{},
	}
	for _, p := range cfg.Profiles {
		s.names[p.SchedulerName] = true
		s.profiles = append(s.profiles, p.SchedulerName)
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	dynInformerFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynClient, 0, v1.NamespaceAll, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	sched, err := scheduler.New(runCtx, client, informerFactory, dynInformerFactory,
		s.rec.recorderFactory(broadcaster),
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithKubeConfig(clientConfig),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(options.Plugins),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	s.sched = sched
	s.rec.wrap(sched.Profiles)
	if !options.UpstreamBackoff {
		s.preemptionGate = &preemptionGate{
			pods:       informerFactory.Core().V1().Pods().Lister(),
			cached:     sched.Cache.GetPod,
			podGroups:  informerFactory.Scheduling().V1beta1().PodGroups().Lister(),
			composites: informerFactory.Scheduling().V1alpha3().CompositePodGroups().Lister(),
			active:     sched.SchedulingQueue.PodsInActiveQ,
			activate:   sched.SchedulingQueue.Activate,
		}
	}
	next := sched.NextEntity
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		if s.preemptionGate != nil {
			s.preemptionGate.await(logger, s.rec.takePreemptions())
		}
		entity, err := next(logger)
		if entity != nil {
			seq := s.watch.changes.Load()
			s.popsMu.Lock()
			entity.ForEachPodInfo(func(p *framework.QueuedPodInfo) bool {
				s.popped[p.Pod.UID] = seq
				return true
			})
			s.popsMu.Unlock()
		}
		return entity, err
	}
	if err := broadcaster.StartRecordingToSinkWithContext(runCtx); err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler events: %w", err)
	}
	if !s.watch.start(runCtx, ctx) {
		cancel()
		return nil, fmt.Errorf("the harness's pod watch did not sync: %w", ctx.Err())
	}
	if options.Lifecycle {
		if err := kubelet.Run(runCtx, client, kubelet.Options{Lifecycle: true}); err != nil {
			cancel()
			return nil, fmt.Errorf("the kubelet stand-in: %w", err)
		}
	}
	informerFactory.Start(runCtx.Done())
	dynInformerFactory.Start(runCtx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	dynInformerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler's informers did not sync: %w", err)
	}
	s.runCtx = runCtx
	s.broadcaster = broadcaster
	return s, nil
}

// Queued waits until kube-scheduler's queue holds every one of pods (in
// some queue: active, gated, waiting for its PodGroup).
func (s *Scheduler) Queued(ctx context.Context, pods []objects.Object) error {
	want := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		want[types.UID(p.UID)] = true
	}
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		queued, _ := s.sched.SchedulingQueue.PendingPods()
		found := 0
		for _, p := range queued {
			if want[p.UID] {
				found++
			}
		}
		return found == len(want), nil
	})
	if err != nil {
		return fmt.Errorf("kube-scheduler's queue did not take in the %d pending pod(s): %w", len(want), err)
	}
	return nil
}

// Run starts scheduling.
func (s *Scheduler) Run() {
	s.started = time.Now()
	go func() {
		defer close(s.done)
		s.sched.Run(s.runCtx)
		s.broadcaster.Shutdown()
	}()
}

// Start is New then Run, for pods already created.
func Start(ctx context.Context, config *rest.Config, options Options) (*Scheduler, error) {
	s, err := New(ctx, config, options)
	if err != nil {
		return nil, err
	}
	s.Run()
	return s, nil
}

// Stop stops scheduling and waits for the scheduler to return.
func (s *Scheduler) Stop() {
	if s == nil || s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
	}
}

// waiting says why the scheduler is not quiet, or "" when it is: nothing
// in its active queue or in flight, no pod marked for deletion left, every
// pending pod of its profiles parked (unschedulable, gated, waiting for its
// PodGroup, or in backoff), and every pod in backoff attempted since the
// last change that could alter its result — its next attempt would decide
// as the last one did.
func (s *Scheduler) waiting() string {
	q := s.sched.SchedulingQueue
	if pods := q.PodsInActiveQ(); len(pods) > 0 {
		return describe("in the active queue", pods)
	}
	if pods := q.InFlightPods(); len(pods) > 0 {
		return describe("being scheduled", pods)
	}
	if pods := q.PendingPodGroupPods(); len(pods) > 0 {
		return describe("arrived while their group was scheduled", pods)
	}
	if n := s.watch.terminating.Load(); n > 0 {
		return fmt.Sprintf("%d pod(s) terminating", n)
	}
	parked := map[types.UID]bool{}
	for _, pods := range [][]*v1.Pod{q.UnschedulablePods(), q.IncompletePodGroupPodsPods()} {
		for _, p := range pods {
			parked[p.UID] = true
		}
	}
	changes := s.watch.changes.Load()
	var retry []*v1.Pod
	s.popsMu.Lock()
	for _, p := range q.PodsInBackoffQ() {
		parked[p.UID] = true
		if s.popped[p.UID] != changes {
			retry = append(retry, p)
		}
	}
	s.popsMu.Unlock()
	if len(retry) > 0 {
		return describe("in backoff, not yet retried since the last change", retry)
	}
	var elsewhere []*v1.Pod
	for _, state := range s.watch.snapshot() {
		p := state.pod
		if state.deleted || p.Spec.NodeName != "" || !s.names[p.Spec.SchedulerName] ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if !parked[p.UID] {
			elsewhere = append(elsewhere, p)
		}
	}
	if len(elsewhere) > 0 {
		return describe("being bound or waiting at Permit", elsewhere)
	}
	return ""
}

func describe(where string, pods []*v1.Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Namespace + "/" + p.Name
	}
	sort.Strings(names)
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return fmt.Sprintf("%d pod(s) %s: %s", len(pods), where, strings.Join(names, ", "))
}

// WaitQuiet polls the scheduler's own state until it is quiet (see
// waiting) and has stayed so, with no new scheduling cycle and no change,
// over settle; or until timeout, when the error names the pods still
// waiting.
func (s *Scheduler) WaitQuiet(ctx context.Context, timeout, settle time.Duration) error {
	const poll = 25 * time.Millisecond
	deadline := time.Now().Add(timeout)
	var since time.Time
	var cycle int64
	var changes uint64
	for {
		why := s.waiting()
		now := time.Now()
		c, n := s.sched.SchedulingQueue.SchedulingCycle(), s.watch.changes.Load()
		switch {
		case why != "" || c != cycle || n != changes:
			since, cycle, changes = time.Time{}, c, n
		case since.IsZero():
			since = now
		case now.Sub(since) >= settle:
			return nil
		}
		if now.After(deadline) {
			if why == "" {
				why = "it kept scheduling"
			}
			return fmt.Errorf("kube-scheduler was not quiet within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}
