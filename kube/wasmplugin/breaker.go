package wasmplugin

import (
	"strings"
	"sync"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"example.invalid/wasched/kube/wasm"
)

// Contained failures of a component are counted by cause. A component's
// circuit breaker opens after repeated failures (its
// pluginConfig args' circuitBreaker: failures within a window, then a
// cool-down; the library keeps the state). kube-scheduler learns of each
// change from the call that made it and reports it here: a metric and, on
// opening, one Event.
var (
	breakerOpened = metrics.NewCounterVec(&metrics.CounterOpts{
		Name:           "wasched_plugin_circuit_breaker_opened_total",
		Help:           "Times a closed circuit breaker of a wasched component opened (its calls then answer per its failure policy without running it; failed trial calls after a cool-down are not counted again).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})
	breakerOpen = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name:           "wasched_plugin_circuit_breaker_open",
		Help:           "How many of a wasched component's circuit breakers are open (one breaker per profile that runs it).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})
	// The name and labels `wasched simulate --metrics` gives the same
	// failures.
	componentFailures = metrics.NewCounterVec(&metrics.CounterOpts{
		Name:           "wasched_plugin_errors_total",
		Help:           "Calls of a wasched component that failed and were contained, by extension point (WIT interface) and cause (cpu, timeout, memory, stack, trap, invalid-result, instantiation; circuit-open: refused by its open circuit breaker without running it).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "extension_point", "cause"})
	registerMetrics sync.Once
)

// failed counts a contained failure of the component at the request's
// extension point.
func (p *Plugin) failed(req wasm.Request, failure *wasm.Failure) {
	registerMetrics.Do(registerHealthMetrics)
	point := req.Point
	if point == "order-victims" || point == "select-candidate" {
		point = "pod-group-post-filter"
	}
	componentFailures.WithLabelValues(p.name, point, failure.Cause).Inc()
}

func registerHealthMetrics() {
	legacyregistry.MustRegister(breakerOpened, breakerOpen, componentFailures)
}

// breakerChanged reports what a call did to the component's breaker.
func (p *Plugin) breakerChanged(req wasm.Request, resp wasm.Response) {
	registerMetrics.Do(registerHealthMetrics)
	message := "the component failed repeatedly"
	if resp.Failure != nil {
		message = resp.Failure.Message
	}
	switch resp.Breaker {
	case wasm.BreakerOpened:
		breakerOpened.WithLabelValues(p.name).Inc()
		breakerOpen.WithLabelValues(p.name).Inc()
		klog.ErrorS(nil, "wasched component's circuit breaker opened", "plugin", p.name, "lastFailure", message)
		if regarding := regardingObject(req); regarding != nil {
			p.handle.EventRecorder().Eventf(regarding, nil, v1.EventTypeWarning, "CircuitBreakerOpened", "Scheduling",
				"plugin %s: circuit breaker opened after its last failure (%s); its extension points answer per its failure policy without calling it until its cool-down has passed", p.name, cut(message, eventMessageBytes))
		}
	case wasm.BreakerReopened:
		klog.V(2).InfoS("wasched component's trial call failed; its circuit breaker stays open", "plugin", p.name, "failure", message)
	case wasm.BreakerClosed:
		breakerOpen.WithLabelValues(p.name).Dec()
		klog.InfoS("wasched component's circuit breaker closed after a successful trial call", "plugin", p.name)
	}
}

// eventMessageBytes is how much of a failure an Event quotes: an Event's
// note is at most 1 KiB (events.k8s.io/v1), and a longer one is refused.
const eventMessageBytes = 512

// cut is s at most n bytes long, cut at a character boundary and marked.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "… (cut)"
}

// regardingObject is the object a call was about, for its Event: the pod,
// else the PodGroup or CompositePodGroup.
func regardingObject(req wasm.Request) runtime.Object {
	ref := func(kind, apiVersion, key string) runtime.Object {
		namespace, name, ok := strings.Cut(key, "/")
		if !ok {
			namespace, name = "", key
		}
		return &v1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: namespace, Name: name}
	}
	unit := req.Unit
	if unit == nil && req.Preemptor != nil {
		if req.Preemptor.Pod != "" {
			return ref("Pod", "v1", req.Preemptor.Pod)
		}
		unit = &wasm.Unit{PodGroup: req.Preemptor.PodGroup, CompositePodGroup: req.Preemptor.CompositePodGroup}
	}
	switch {
	case req.Pod != "":
		return ref("Pod", "v1", req.Pod)
	case unit != nil && unit.PodGroup != "":
		return ref("PodGroup", "scheduling.k8s.io/v1beta1", unit.PodGroup)
	case unit != nil && unit.CompositePodGroup != "":
		return ref("CompositePodGroup", "scheduling.k8s.io/v1alpha3", unit.CompositePodGroup)
	}
	return nil
}
