// A fake cluster view for the policy's tests: the methods of the host's
// snapshot the policy calls, over nodes and pods built in the test (as the
// Rust SDK's wasched_sdk::fake::FakeCluster). Resources are cpu, memory,
// pods, then extended resources in name order, as the host numbers them;
// namespaces are symbols; amounts come back as BigUint64Array, as
// componentize-js hands WIT list<u64>.

const BASE_RESOURCES = ['cpu', 'memory', 'pods'];

export class FakeCluster {
  #symbols = [];
  #nodes = [];
  #pods = [];
  /** Host calls the policy made, as a component would. */
  calls = 0;

  #intern(text) {
    if (!this.#symbols.includes(text)) this.#symbols.push(text);
    return this.#symbols.indexOf(text);
  }

  /** A node with `allocatable` amounts ({'nvidia.com/gpu': 8}); its id. */
  addNode(name, allocatable) {
    this.#intern(name);
    this.#nodes.push(new Map(Object.entries(allocatable)));
    return this.#nodes.length - 1;
  }

  /** A pod `namespace/name` with `requests`, on `node` or pending; its id. */
  addPod(name, requests, node = undefined) {
    const namespace = this.#intern(name.split('/')[0]);
    this.#pods.push({ namespace, requests: new Map(Object.entries(requests)), node });
    return this.#pods.length - 1;
  }

  resourceNames() {
    this.calls++;
    const extended = new Set();
    for (const n of this.#nodes) for (const r of n.keys()) extended.add(r);
    for (const p of this.#pods) for (const r of p.requests.keys()) extended.add(r);
    return [...BASE_RESOURCES, ...[...extended].filter((r) => !BASE_RESOURCES.includes(r)).sort()];
  }

  podRequests(pod) {
    const names = this.resourceNames();
    return BigUint64Array.from(names, (r) => BigInt(this.#pods[pod].requests.get(r) ?? 0));
  }

  pod(pod) {
    this.calls++;
    const p = this.#pods[pod];
    return p === undefined ? undefined : { namespace: p.namespace, node: p.node };
  }

  podsOnNode(node) {
    this.calls++;
    return Uint32Array.from(this.#pods.flatMap((p, i) => (p.node === node ? [i] : [])));
  }

  nodeResources(resources, nodes) {
    this.calls++;
    const names = this.resourceNames();
    const block = [];
    for (const r of resources) {
      for (const n of nodes) block.push(BigInt(this.#nodes[n].get(names[r]) ?? 0));
      for (const n of nodes) {
        let sum = 0;
        for (const p of this.#pods) if (p.node === n) sum += p.requests.get(names[r]) ?? 0;
        block.push(BigInt(sum));
      }
    }
    return BigUint64Array.from(block);
  }
}
