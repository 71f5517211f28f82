// Package wasmplugin is kube-scheduler v1.37.2's out-of-tree plugin that
// runs wasched components (wasm components against wasched:scheduler),
// through package wasm (the wasched-ffi library over cgo).
//
// Each configured component is one kube-scheduler plugin under the name
// the component calls itself; its pluginConfig args are contract 0.3.0's
// plugin entry (failurePolicy, fuel, timeout, memoryLimit, limits, args)
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
// A component's failure (trap, fuel, deadline, memory, invalid answer) is
// contained by the library and arrives as an Error status naming the
// plugin (failurePolicy Fail), or as Skip (Ignore), which lets the pod
// pass that point.
//
// Not mapped yet: PlacementScore and PodGroupPostFilter
// (contract 0.3.0 decided that preemption trials run through the
// PodGroupSchedulingFunc kube-scheduler hands PodGroupPostFilter).
package wasmplugin
