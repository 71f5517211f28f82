// The component: TeamGpuIsolationJs, the policy of policy.js behind the WIT
// exports `plugin` and `score` of world wasched:scheduler/score-plugin
// (bindings generated from wit/ by componentize-js at build time).
//
// Built with every WASI feature disabled: console.log and console.error
// reach the host's log through the `log` import (wasched-log.js); files,
// clocks and the environment are not there.

// @ts-check

import { installConsole } from './wasched-log.js';
import * as policy from './policy.js';

installConsole();

let args = policy.parseArgs('{}');

/** @type {typeof import('wasched:scheduler/plugin@0.3.0')} */
export const plugin = {
  name() {
    return policy.NAME;
  },
  configure(text) {
    // A thrown error is the `err` of configure's result.
    args = policy.parseArgs(text);
  },
};

/** @type {typeof import('wasched:scheduler/score@0.3.0')} */
export const score = {
  score(snapshot, pod, nodes) {
    try {
      return BigInt64Array.from(policy.score(args, snapshot, pod, nodes));
    } catch (e) {
      if (e instanceof policy.ScoreError) {
        // The `err` of score's result: a status.
        /** @type {import('wasched:scheduler/types@0.3.0').Status} */
        const status = { code: 'error', reason: e.message };
        throw status;
      }
      throw e;
    }
  },
};
