package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"example.invalid/wasched/kube/engine"
	"example.invalid/wasched/kube/jobcontroller"
	"example.invalid/wasched/kube/kubelet"
	"example.invalid/wasched/kube/objects"
)

// SubmitAtAnnotation on an object of a trace is when it is created,
// counted from the start of the play (a Go duration: "0s", "1m30s").
const SubmitAtAnnotation = "wasched.io/submit-at"

// PlayedPod is what happened to one pod of a played trace, each time in
// seconds from the start of the play as the harness saw it (nil: never).
type PlayedPod struct {
	Name string `json:"name"`
	// Job is the pod's batch.kubernetes.io/job-name label.
	Job      string   `json:"job,omitempty"`
	Node     string   `json:"node,omitempty"`
	Created  float64  `json:"created"`
	Bound    *float64 `json:"bound,omitempty"`
	Running  *float64 `json:"running,omitempty"`
	Finished *float64 `json:"finished,omitempty"`
	// Disrupted is when the pod got its DisruptionTarget condition (a
	// preemption victim).
	Disrupted *float64 `json:"disrupted,omitempty"`
	Deleted   *float64 `json:"deleted,omitempty"`
	Phase     string   `json:"phase,omitempty"`
}

// PlayedJob is what happened to one Job of a played trace.
type PlayedJob struct {
	Name    string  `json:"name"`
	Created float64 `json:"created"`
	// Complete and Failed are when the Job got that condition.
	Complete *float64 `json:"complete,omitempty"`
	Failed   *float64 `json:"failed,omitempty"`
}

// Played is `play`'s output.
type Played struct {
	Pods []PlayedPod `json:"pods"`
	Jobs []PlayedJob `json:"jobs"`
	// Ended is when the play stopped: every Job of the trace finished, or
	// --until reached.
	Ended float64 `json:"ended"`
}

// recorder keeps what the informers saw, timed from start.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	pods  map[string]*PlayedPod
	jobs  map[string]*PlayedJob
	// changed is signalled (without blocking) whenever a Job finishes.
	changed chan struct{}
}

// now is the time since the start, never less than 0 (objects seen while
// the clock waits for its whole second count from it).
func (r *recorder) now() float64 { return max(0, time.Since(r.start).Seconds()) }

func stamp(field **float64, at float64) {
	if *field == nil {
		*field = &at
	}
}

func (r *recorder) pod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.now()
	key := pod.Namespace + "/" + pod.Name
	played := r.pods[key]
	if played == nil || played.Deleted != nil {
		played = &PlayedPod{Name: key, Job: pod.Labels[batchv1.JobNameLabel], Created: at}
		r.pods[key] = played
	}
	if pod.Spec.NodeName != "" {
		played.Node = pod.Spec.NodeName
		stamp(&played.Bound, at)
	}
	switch pod.Status.Phase {
	case v1.PodRunning:
		stamp(&played.Running, at)
	case v1.PodSucceeded, v1.PodFailed:
		stamp(&played.Finished, at)
	}
	played.Phase = string(pod.Status.Phase)
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			stamp(&played.Disrupted, at)
		}
	}
}

func (r *recorder) podGone(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		r.mu.Lock()
		defer r.mu.Unlock()
		if played := r.pods[pod.Namespace+"/"+pod.Name]; played != nil {
			stamp(&played.Deleted, r.now())
		}
	}
}

func (r *recorder) job(obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.now()
	key := job.Namespace + "/" + job.Name
	played := r.jobs[key]
	if played == nil {
		played = &PlayedJob{Name: key, Created: at}
		r.jobs[key] = played
	}
	for _, c := range job.Status.Conditions {
		if c.Status != v1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			stamp(&played.Complete, at)
		case batchv1.JobFailed:
			stamp(&played.Failed, at)
		}
	}
	if played.Complete != nil || played.Failed != nil {
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
}

// finished counts the Jobs of names that are Complete or Failed.
func (r *recorder) finished(names []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, name := range names {
		if j := r.jobs[name]; j != nil && (j.Complete != nil || j.Failed != nil) {
			n++
		}
	}
	return n
}

func (r *recorder) result() Played {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Played{Pods: []PlayedPod{}, Jobs: []PlayedJob{}, Ended: r.now()}
	for _, p := range r.pods {
		out.Pods = append(out.Pods, *p)
	}
	for _, j := range r.jobs {
		out.Jobs = append(out.Jobs, *j)
	}
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].Name < out.Pods[j].Name })
	sort.Slice(out.Jobs, func(i, j int) bool { return out.Jobs[i].Name < out.Jobs[j].Name })
	return out
}

// submission is one object of a trace and when it is created.
type submission struct {
	at   time.Duration
	item *unstructured.Unstructured
}

// submissions orders a trace's objects by their SubmitAtAnnotation (the
// file's order among equal times); an object without it, or with a value
// that is not a duration ≥ 0, is an error naming it.
func submissions(items []*unstructured.Unstructured) ([]submission, error) {
	out := make([]submission, 0, len(items))
	for _, item := range items {
		ref := item.GetKind() + " " + item.GetNamespace() + "/" + item.GetName()
		value, ok := item.GetAnnotations()[SubmitAtAnnotation]
		if !ok {
			return nil, fmt.Errorf("%s: no %s annotation", ref, SubmitAtAnnotation)
		}
		at, err := time.ParseDuration(value)
		if err != nil || at < 0 {
			return nil, fmt.Errorf("%s: annotation %s: %q is not a duration ≥ 0", ref, SubmitAtAnnotation, value)
		}
		out = append(out, submission{at: at, item: item})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out, nil
}

// play runs a trace on the cluster in real time: kube-scheduler with its
// own backoff, the kubelet stand-in keeping time and upstream's Job
// controller; each object of --trace is created at its submit time, and
// once every Job of the trace has finished (or --until), what happened to
// every pod and Job is printed as JSON.
func play(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("play", flag.ContinueOnError)
	var c common
	c.register(flags)
	traceFile := flags.String("trace", "", "JSON List of the trace's objects, each annotated "+SubmitAtAnnotation+" (required)")
	until := flags.Duration("until", 30*time.Minute, "stop this long after the start even if Jobs are still running")
	preferFile := flags.String("prefer", "", "break kube-scheduler's ties toward the choices in FILE (JSON: nodes, groups, jobs)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *traceFile == "" {
		return errors.New("play: --trace FILE is required")
	}
	var prefer *engine.Preferences
	if *preferFile != "" {
		var err error
		if prefer, err = engine.ReadPreferences(*preferFile); err != nil {
			return err
		}
	}
	items, config, err := c.prepare()
	if err != nil {
		return err
	}
	traceItems, err := objects.ReadFile(*traceFile)
	if err != nil {
		return fmt.Errorf("%s: %w", *traceFile, err)
	}
	trace, err := submissions(traceItems)
	if err != nil {
		return fmt.Errorf("%s: %w", *traceFile, err)
	}
	var jobs []string
	for _, s := range trace {
		if s.item.GetKind() == "Job" {
			jobs = append(jobs, s.item.GetNamespace()+"/"+s.item.GetName())
		}
	}
	scheduler := &engine.Options{Config: config, Plugins: c.plugins, UpstreamBackoff: true, Lifecycle: true, Prefer: prefer}
	running, err := startCluster(ctx, 0, items, scheduler, kubelet.Options{Lifecycle: true})
	if err != nil {
		return err
	}
	defer running.stop()
	if err := jobcontroller.Run(ctx, running.cp.RestConfig()); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(running.cp.RestConfig())
	if err != nil {
		return err
	}
	rec := &recorder{pods: map[string]*PlayedPod{}, jobs: map[string]*PlayedJob{}, changed: make(chan struct{}, 1)}
	factory := informers.NewSharedInformerFactory(client, 0)
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandlerFuncs
	}{
		{factory.Core().V1().Pods().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: rec.pod, UpdateFunc: func(_, obj any) { rec.pod(obj) }, DeleteFunc: rec.podGone}},
		{factory.Batch().V1().Jobs().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: rec.job, UpdateFunc: func(_, obj any) { rec.job(obj) }}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return err
		}
	}
	loader, err := objects.NewLoader(running.cp.RestConfig())
	if err != nil {
		return err
	}
	// The clock starts once the informers have synced (the cluster's own
	// objects count as seen at time 0), on a whole second of the wall clock:
	// kube-scheduler releases backoff in 1-second windows of the wall
	// clock, which then fall on whole seconds of the play, as the
	// replay's do.
	rec.mu.Lock()
	rec.start = time.Now()
	rec.mu.Unlock()
	factory.Start(ctx.Done())
	for informer, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the informer of %v did not sync: %w", informer, ctx.Err())
		}
	}
	// Moved forward to the next whole second, keeping the monotonic clock
	// reading (Truncate would drop it).
	now := time.Now()
	start := now.Add(now.Truncate(time.Second).Add(time.Second).Sub(now))
	time.Sleep(time.Until(start))
	rec.mu.Lock()
	rec.start = start
	rec.mu.Unlock()
	deadline := time.NewTimer(*until)
	defer deadline.Stop()
	for _, s := range trace {
		select {
		case <-time.After(time.Until(rec.start.Add(s.at))):
		case <-deadline.C:
			return printPlayed(rec.result())
		case <-ctx.Done():
			return ctx.Err()
		}
		if _, err := loader.LoadInOrder(ctx, []*unstructured.Unstructured{s.item}); err != nil {
			return fmt.Errorf("%s: %w", *traceFile, err)
		}
	}
	for rec.finished(jobs) < len(jobs) {
		select {
		case <-rec.changed:
		case <-deadline.C:
			return printPlayed(rec.result())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return printPlayed(rec.result())
}

func printPlayed(played Played) error {
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	return encoder.Encode(played)
}
