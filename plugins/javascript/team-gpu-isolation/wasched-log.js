// console.* for a component built without WASI stdio: each call becomes one
// line of the host's log through the WIT `log` import (log and info at
// info, debug at debug, warn at warn, error at error), so nothing a plugin
// prints is lost.

// @ts-check

import { log } from 'wasched:scheduler/log@0.3.0';

/** @typedef {import('wasched:scheduler/log@0.3.0').Level} Level */

/** @param {unknown[]} parts */
function line(parts) {
  return parts
    .map((p) => (typeof p === 'string' ? p : typeof p === 'bigint' ? `${p}n` : JSON.stringify(p, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))))
    .join(' ');
}

/** Points globalThis.console at the host's log. */
export function installConsole() {
  /** @param {Level} level */
  const to =
    (level) =>
    /** @param {unknown[]} parts */
    (...parts) =>
      log(level, line(parts));
  /** @type {any} */ (globalThis).console = {
    debug: to('debug'),
    log: to('info'),
    info: to('info'),
    warn: to('warn'),
    error: to('error'),
  };
}
