// The policy over a fake cluster, run natively by node's test runner: the
// cases of the Rust plugin's tests (plugins/team-gpu-isolation/src/tests.rs).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as policy from '../policy.js';
import { FakeCluster } from './fake-cluster.js';

const GPU = 'nvidia.com/gpu';
const defaults = policy.parseArgs('{}');

/** Four 8-GPU nodes: empty, 4 GPUs of team ml, 2 of ml and 4 of vision, 6
 * of vision; and a cpu-only node. */
function sharedCluster() {
  const cluster = new FakeCluster();
  const nodes = [];
  for (const [name, load] of [
    ['empty', []],
    ['ml-only', [['ml', 4]]],
    ['mixed', [['ml', 2], ['vision', 4]]],
    ['vision-only', [['vision', 6]]],
  ]) {
    const node = cluster.addNode(name, { cpu: 64_000, [GPU]: 8 });
    load.forEach(([team, gpus], i) => cluster.addPod(`${team}/${name}-${i}`, { cpu: 1_000, [GPU]: gpus }, node));
    nodes.push(node);
  }
  const cpuOnly = cluster.addNode('cpu-only', { cpu: 64_000 });
  cluster.addPod('web/api-0', { cpu: 1_000 }, cpuOnly);
  nodes.push(cpuOnly);
  return { cluster, nodes };
}

const scores = (list) => list.map(Number);

test('a team scores highest where no other team holds GPUs', () => {
  const { cluster, nodes } = sharedCluster();
  const pod = cluster.addPod('ml/train-0', { [GPU]: 2 });
  // Others hold 0, 0, 4, 6 of 8 GPUs; the cpu-only node has none.
  assert.deepEqual(scores(policy.score(defaults, cluster, pod, nodes)), [100, 100, 50, 25, 0]);
});

test('the other team sees the mirror image', () => {
  const { cluster, nodes } = sharedCluster();
  const pod = cluster.addPod('vision/detect-0', { [GPU]: 1 });
  assert.deepEqual(scores(policy.score(defaults, cluster, pod, nodes)), [100, 50, 75, 100, 0]);
});

test('pods without the resource are not steered', () => {
  const { cluster, nodes } = sharedCluster();
  const pod = cluster.addPod('ml/notebook', { cpu: 500 });
  assert.deepEqual(scores(policy.score(defaults, cluster, pod, nodes)), [0, 0, 0, 0, 0]);
});

test('the resource is configurable', () => {
  const { cluster, nodes } = sharedCluster();
  const pod = cluster.addPod('ml/cpu-heavy', { cpu: 500 });
  // cpu: others hold 0, 0, 1000, 1000 and (web) 1000 of 64000 millicores.
  const cpu = policy.parseArgs('{"resource": "cpu"}');
  assert.deepEqual(scores(policy.score(cpu, cluster, pod, nodes)), [100, 100, 98, 98, 98]);
  const fpga = policy.parseArgs('{"resource": "example.com/fpga"}');
  assert.deepEqual(scores(policy.score(fpga, cluster, pod, nodes)), [0, 0, 0, 0, 0]);
});

test('over-committed nodes score zero', () => {
  assert.equal(policy.isolationScore(8n, 9n), 0n);
  assert.equal(policy.isolationScore(8n, 8n), 0n);
  assert.equal(policy.isolationScore(3n, 1n), 66n);
  assert.equal(policy.isolationScore(0n, 0n), 0n);
  assert.equal(policy.isolationScore(2n ** 64n - 1n, 1n), 99n);
});

test('args are checked', () => {
  assert.throws(() => policy.parseArgs('{"resource": ""}'));
  assert.throws(() => policy.parseArgs('{"team": "x"}'), /team/);
  assert.throws(() => policy.parseArgs('{"resource": null}'), /resource/);
  assert.deepEqual(policy.parseArgs('{}'), { resource: GPU });
});

test('nodes the host refuses are an error the component answers, not a trap', () => {
  const { cluster, nodes } = sharedCluster();
  const pod = cluster.addPod('ml/train-2', { [GPU]: 1 });
  cluster.nodeResources = () => {
    throw Object.assign(new Error('unknown'), { payload: 'unknown' });
  };
  assert.throws(() => policy.score(defaults, cluster, pod, nodes), (e) => e instanceof policy.ScoreError && e.message === 'node-resources refused the nodes asked: Unknown');
});
