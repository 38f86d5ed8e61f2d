export * from './subagent-events.js';
export * from './child-catalog.js';
export * from './child-errors.js';
export * from './child-descriptor.js';
export * from './child-authorisation.js';
export * from './child-state.js';
export * from './settlement.js';
export * from './child-edges.js';
