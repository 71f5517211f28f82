// A test fixture (host/tests/polyglot.rs): a JavaScript component, built
// like plugins/javascript/team-gpu-isolation (componentize-js with every
// WASI feature disabled), that reaches for what the sandbox does not give.
// Its args name the probe; its score runs it, logs what it saw and answers
// 7 on every node:
//
// - clock: Date.now() and performance.now() (a trap: no clock is linked);
// - random: Math.random();
// - env: globalThis.process;
// - print: console.log and console.error.

import { installConsole } from '../../../plugins/javascript/team-gpu-isolation/wasched-log.js';

installConsole();

let probe = '';

export const plugin = {
  name() {
    return 'ProbeJavascript';
  },
  configure(text) {
    probe = JSON.parse(text).probe ?? '';
  },
};

export const score = {
  score(snapshot, pod, nodes) {
    if (probe === 'clock') {
      console.log('time', Date.now(), typeof performance === 'undefined' ? 'none' : performance.now());
    } else if (probe === 'random') {
      console.log('random', Math.random());
    } else if (probe === 'env') {
      console.log('process', typeof process);
    } else if (probe === 'print') {
      console.log('hello from JavaScript', 42n);
      console.error('a warning');
    }
    return Array.from(nodes, () => 7n);
  },
};
