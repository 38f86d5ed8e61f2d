import { AsyncLocalStorage } from 'node:async_hooks';
import type { DecidingHook } from './hooks.js';

/**
 * Which deciding hook's listener a piece of code runs for, across its awaits: what an agent's listener sends anywhere
 * inside its call (before or after an `await`, or from work the call started) is the hook's own. One storage for the
 * whole process (each AsyncLocalStorage instance costs on every async resource), holding a chain of frames, each
 * naming the agent it belongs to: one agent's hook is never another agent's.
 */

/** One deciding listener's call: the agent (`owner`) whose hook `hook` runs, inside the calls already running. */
interface HookFrame {
  readonly owner: object;
  readonly hook: DecidingHook;
  readonly outer: HookFrame | undefined;
}

const frames = new AsyncLocalStorage<HookFrame>();

/** Runs `call` as a listener of `owner`'s deciding hook `hook`: everything it starts carries that hook. */
export const runInHook = <T>(owner: object, hook: DecidingHook, call: () => T): T => frames.run({ owner, hook, outer: frames.getStore() }, call);

/** The innermost deciding hook of `owner` whose listener's call the current code runs in, if any. */
export const currentHook = (owner: object): DecidingHook | null => {
  for (let f = frames.getStore(); f !== undefined; f = f.outer) if (f.owner === owner) return f.hook;
  return null;
};

/**
 * Runs `work` outside every hook's call: how the runtime starts its own work (an agent's driver) that a listener's
 * send may trigger, so that what the runtime's later calls of deployment code send is not taken for that hook's.
 */
export const outsideHooks = <T>(work: () => T): T => (frames.getStore() === undefined ? work() : frames.exit(work));
