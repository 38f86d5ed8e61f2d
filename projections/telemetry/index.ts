export * from './span-types.js';
export * from './span-ids.js';
export * from './derive-spans.js';
export * from './otlp-json.js';
export * from './metrics.js';
