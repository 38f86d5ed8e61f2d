import { eraseScenario } from './support/erase-scenario.js';

// the same scenario as erase.test.ts, on PostgreSQL (its own file, so the two run side by side)
eraseScenario('postgres');
