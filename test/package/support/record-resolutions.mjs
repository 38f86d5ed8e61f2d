// Loaded with `node --import`: registers resolve hooks that append every resolved module URL to the file named by
// STEERLOG_MODULE_LOG, one per line. Used by test/package/module-graph.test.ts.
import { register } from 'node:module';

register(new URL('./resolution-hooks.mjs', import.meta.url), { data: { log: process.env.STEERLOG_MODULE_LOG } });
