// Team GPU isolation: keeps each team's GPU pods off the nodes whose GPUs
// other teams use. A team is a namespace.
//
// Per candidate node, for a pod that requests the resource (default
// `nvidia.com/gpu`):
//
//   others = the resource requested on the node by pods of other namespaces
//            (bound, or assumed earlier in the cycle)
//   score  = (allocatable - min(others, allocatable)) * 100 / allocatable
//
// in integers (BigInt: amounts are WIT u64), rounded down. A node without
// the resource scores 0; a pod that does not request it scores 0
// everywhere. The same policy as the Rust plugin plugins/team-gpu-isolation
// (WaschedTeamGpuIsolation): the two components decide alike, which
// host/tests/polyglot.rs checks.
//
// This module is the policy alone, over anything with the methods of the
// host's snapshot it calls: the component (app.js) hands it the host's
// snapshot, the tests (test/) a fake one. Its types are the bindings'
// (`npm run types` generates them from wit/ into types/; `npm test` checks
// this file against them with tsc).

// @ts-check

/** @typedef {import('wasched:scheduler/cluster@0.3.0').Snapshot} Snapshot */
/** @typedef {{ resource: string }} Args */

export const NAME = 'TeamGpuIsolationJs';
export const MAX_SCORE = 100n;

/** The call cannot be answered (an unknown pod, nodes the host refused):
 * the component answers it as an `error` status with this message. */
export class ScoreError extends Error {}

/**
 * The WIT error's case (`unknown`, `stale`) as the Rust plugin names it:
 * `Unknown`, `Stale`.
 * @param {unknown} error
 */
function describe(error) {
  const payload = String(/** @type {{ payload?: unknown }} */ (error)?.payload ?? error);
  return payload.charAt(0).toUpperCase() + payload.slice(1);
}

/**
 * The args' JSON text, checked; unknown fields are refused by name.
 * @param {string} text
 * @returns {Args}
 */
export function parseArgs(text) {
  let fields;
  try {
    fields = JSON.parse(text);
  } catch (e) {
    throw new Error(`${NAME}: args are not JSON: ${/** @type {Error} */ (e).message}`);
  }
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new Error(`${NAME}: args must be an object`);
  }
  const unknown = Object.keys(fields).filter((k) => k !== 'resource').sort();
  if (unknown.length > 0) {
    throw new Error(`${NAME}: unknown field \`${unknown[0]}\`, expected \`resource\``);
  }
  const resource = 'resource' in fields ? fields.resource : 'nvidia.com/gpu';
  if (typeof resource !== 'string' || resource === '') {
    throw new Error(`${NAME}: resource must be a non-empty string`);
  }
  return { resource };
}

/**
 * The score of a node with `allocatable` of the resource, of which pods of
 * other teams request `others`.
 * @param {bigint} allocatable
 * @param {bigint} others
 * @returns {bigint}
 */
export function isolationScore(allocatable, others) {
  if (allocatable === 0n) {
    return 0n;
  }
  const taken = others < allocatable ? others : allocatable;
  return ((allocatable - taken) * MAX_SCORE) / allocatable;
}

/**
 * One score per entry of `nodes`, in order.
 * @param {Args} args
 * @param {Snapshot} snapshot
 * @param {number} pod
 * @param {ArrayLike<number>} nodes
 * @returns {bigint[]}
 */
export function score(args, snapshot, pod, nodes) {
  const zeros = () => Array.from(nodes, () => 0n);
  const resource = snapshot.resourceNames().indexOf(args.resource);
  if (resource < 0) {
    return zeros(); // no node has it
  }
  const requests = snapshot.podRequests(pod);
  if (resource >= requests.length || BigInt(requests[resource]) === 0n) {
    return zeros();
  }
  const info = snapshot.pod(pod);
  if (info === undefined) {
    throw new ScoreError(`unknown pod ${pod}`);
  }
  const team = info.namespace;
  // One block: the resource's allocatable amounts of `nodes`, then their
  // requested amounts. The host refuses ids outside the snapshot and lists
  // longer than its nodes (the bindings throw the WIT error).
  let allocatable;
  try {
    allocatable = snapshot.nodeResources(Uint32Array.of(resource), Uint32Array.from(nodes));
  } catch (e) {
    throw new ScoreError(`node-resources refused the nodes asked: ${describe(e)}`);
  }
  /** @type {Map<number, number | undefined>} */
  const teams = new Map();
  return Array.from(nodes, (node, i) => {
    const amount = BigInt(allocatable[i]);
    if (amount === 0n) {
      return 0n;
    }
    let others = 0n;
    for (const other of snapshot.podsOnNode(node)) {
      if (!teams.has(other)) {
        teams.set(other, snapshot.pod(other)?.namespace);
      }
      const namespace = teams.get(other);
      if (namespace !== undefined && namespace !== team) {
        const otherRequests = snapshot.podRequests(other);
        if (resource < otherRequests.length) {
          others += BigInt(otherRequests[resource]);
        }
      }
    }
    return isolationScore(amount, others);
  });
}
