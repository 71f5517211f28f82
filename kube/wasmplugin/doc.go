// Package wasmplugin is kube-scheduler v1.37.2's out-of-tree plugin that
// runs wasched components (wasm components against wasched:scheduler),
// through package wasm (the wasched-ffi library over cgo).
//
// Each configured component is one kube-scheduler plugin under the name
// the component calls itself; its pluginConfig args are those simulate
// reads (failurePolicy, fuel, timeout, memoryLimit, limits, args)
// plus `component`, the file (absent: the bundled component of that name).
// Enable a component at the extension points it exports, in the profile's
// per-point lists: not through multiPoint, which would also enable it at
// points it does not export (the plugin answers those neutrally), and a
// profile has one PlacementGenerate plugin, so TopologyPlacementGenerator
// must be disabled where WaschedTopologyPlacement is enabled.
//
// # The cluster view
//
// The components see a view (one per profile) fed by change: PodGroups,
// Workloads, CompositePodGroups (under their gates), PriorityClasses,
// PodDisruptionBudgets and pending pods from the informers as they change;
// each node, with every pod its NodeInfo lists (assumed pods included),
// sent again at PreFilter/PreScore when its fingerprint moved. The
// fingerprint is the NodeInfo's generation plus its pods, because
// kube-scheduler keeps a node's generation when a PodGroup cycle assumes
// or forgets a pod in the snapshot.
//
// # The mapping
//
//   - PreEnqueue → pre-enqueue, asked about the pod's PodGroup (the
//     contract asks about units); a pod of no PodGroup passes, as upstream
//     GangScheduling lets it.
//
//   - PreFilter → filter over every node at once (one component call per
//     pod, not per node); Filter reads the verdict, and asks again for a
//     node whose fingerprint changed since (preemption trials remove
//     victims from a copy). A filter rejection is Unschedulable: the
//     contract's per-reason groups carry no code through the C ABI yet.
//
//   - PreScore → score over the feasible nodes at once; Score reads it.
//     No NormalizeScore: a component's scores are already 0–100 (checked
//     by the host), kube-scheduler's scale.
//
//   - Permit → permit (contract 0.3.0's decision for the gang verdict,
//     since PlacementFeasible is internal and consulted only for the
//     in-tree GangScheduling): progress is the PodGroup's scheduled pods
//     (assumed plus assigned, from the PodGroupManager) and its pods not
//     yet scheduled; Wait holds the pod for PermitTimeout and activates the
//     rest of its group, Success allows every waiting member, a rejection
//     (or a failure) holds the pod PermitRejectDelay, then rejects it with
//     the component's reason: kube-scheduler v1.37.2 requeues a group
//     rejected at Permit at once and ahead of every other pod, so an
//     immediate rejection would retry it in a loop and starve the queue. Upstream deems a placement feasible once one pod
//     fits (PlacementFeasible runs after every pod); through Permit the
//     verdict is asked once per pod when the group is submitted.
//
//   - PlacementGenerate → placement-generate within the parent placement;
//     the placements come back by node name and go to kube-scheduler as the
//     parent's own NodeInfos (it requires the snapshot's pointers); Skip
//     keeps the parent. kube-scheduler runs one generator per profile, so
//     TopologyPlacementGenerator is disabled where a component generates.
//
//   - PlacementScore → placement-score for each feasible placement, with
//     the pods kube-scheduler assigned in it; the library assumes them for
//     the call, because kube-scheduler has reverted them by the time it
//     scores and the contract scores with them in place. No
//     NormalizePlacementScore (0–100 already); kube-scheduler weighs and
//     adds the plugins' scores, and breaks ties at random where wasched's
//     host takes the placement generated first.
//
//   - PodGroupPostFilter → workload-aware preemption with the trials in
//     kube-scheduler (contract 0.3.0's decision): the candidate victims are
//     formed as kube-scheduler forms them (strictly lower priority; the
//     pods under the root-most group with disruption mode All together,
//     every other pod alone; PodDisruptionBudget violations marked in
//     kube-scheduler's importance order), order-victims orders them,
//     they are removed through the mutable snapshot lister, the
//     PodGroupSchedulingFunc kube-scheduler passed tries the group once
//     with every plugin of the profile, and the victims are put back in the
//     component's order while every assigned pod still passes
//     RunFilterPluginsWithNominatedPods; select-candidate then accepts or
//     declines the one candidate and the plugin evicts what is left, in
//     parallel (DisruptionTarget condition, delete; a pod waiting at
//     Permit is preempted in memory, one in PreBind has its binding
//     cancelled), returning the nominations and recording upstream's
//     workload preemption metrics. The eviction runs within
//     the cycle, as upstream's with SchedulerAsyncPreemption off: the
//     asynchronous eviction upstream defaults to gates the group at
//     DefaultPreemption's PreEnqueue through its executor, which an
//     out-of-tree plugin cannot reach. kube-scheduler
//     gives one domain, the whole cluster: its PodGroupSchedulingFunc runs
//     the group's whole placement search at once, so wasched's per-placement
//     domains (and a choice among them) cannot be offered to
//     select-candidate here. order-victims is asked before the trial, on
//     the cluster as it stands (wasched's host asks once the trial fits; the
//     order does not depend on it, and the view shows the victims in place
//     only before kube-scheduler's trial removes them), so a component
//     failing there fails an attempt whose trial would have found no room
//     anyway. A member nominated where a lower-priority pod
//     is already terminating by preemption keeps its nomination and nothing
//     more is evicted. Lone pods keep DefaultPreemption's PostFilter: the
//     contract's lone-pod preemption (a domain per node) is not mapped.
//
// A component's failure (trap, fuel, deadline, memory, invalid answer) is
// contained by the library and arrives as an Error status naming the
// plugin (failurePolicy Fail), or as Skip (Ignore), which lets the pod
// pass that point (at PodGroupPostFilter: declines, so the next plugin is
// asked).
package wasmplugin
