/**
 * The log builder moved into the package (`steerlog/testing`, testing/log-builder.ts); import it from there. This
 * re-export keeps test files written before the move compiling.
 */
export * from '../../testing/log-builder.js';
