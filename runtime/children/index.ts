export * from './child-manager.js';
export * from './child-tools.js';
export type { Activation } from './activation.js';
export { KeyedLock } from '../keyed-lock.js';
export * from './child-options.js';
