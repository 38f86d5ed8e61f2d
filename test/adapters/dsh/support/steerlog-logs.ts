import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chainedSession } from '../../../support/chained-session.js';

const examples = fileURLToPath(new URL('../../../../docs/examples', import.meta.url));

/**
 * The steerlog logs the harness-shape round trips rewrite (see `toHarnessLines`): every example log but the one whose
 * schema is invalid (valid and refused ones), and a runtime-written session with actors, each as its envelopes.
 */
export const steerlogLogs = async (): Promise<[string, Record<string, unknown>[]][]> => [
  ...readdirSync(examples)
    .filter((f) => f.endsWith('.jsonl') && f !== 'invalid-schema.jsonl')
    .map((f): [string, Record<string, unknown>[]] => [f, readFileSync(join(examples, f), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)]),
  // the header has a creation time but no event time: session/created is read with time = createdAt (and the
  // hashes go: they would no longer hold, and the harness's format has none)
  [
    'a runtime session with actors',
    (await chainedSession('round-trip')).map(({ hash: _h, ...e }) => ({ ...e, ...(e.type === 'session/created' ? { time: (e.data as { createdAt: number }).createdAt } : {}) }) as Record<string, unknown>),
  ],
];
