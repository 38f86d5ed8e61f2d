/**
 * Audit and verify throughput on one chained session log, measured side by side in one run against JSON.parse of
 * the same lines (medians of interleaved rounds):
 *   npx tsx bench/audit-verify.ts [--turns 10000] [--rounds 3]
 * A turn is 9 events (follow-up, turn/start, claim, step/start, user/message, assistant/message, step/end,
 * turn/end, plus a chain/head), so the default log holds 90,001 events.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditExtras } from '../audit/audit-extras.js';
import { auditFile } from '../audit/audit-fold.js';
import { fileEnvelopes } from '../audit/log-sources.js';
import { verifySession } from '../formats/chain/verify-session.js';
import { createUserMessage } from '../domain/message.js';
import type { MessageId } from '../domain/brand.js';
import { SessionLog } from '../runtime/session-log.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { sequentialIds, steppingClock } from '../runtime/ports/clock.js';
import { silentLogger } from '../runtime/logger.js';
import { fmt, machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const TURNS = arg('turns', 10_000);
const ROUNDS = arg('rounds', 3);

const buildLog = (): string => {
  const log = new SessionLog({ store: new MemoryEventStore(), stream: 'bench', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1e9 });
  log.append('session/created', { sessionId: 'bench', createdAt: 0, kind: 'ordinary' });
  for (let t = 1; t <= TURNS; t++) {
    const m = createUserMessage(`input ${t}`, { kind: 'user' }, { newId: () => `m${t}` as MessageId });
    log.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [m] }, { metadata: { actor: 'user:bench' } });
    log.append('turn/start', { turn: t });
    log.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    log.append('step/start', { turn: t, step: 1 });
    log.append('user/message', m);
    log.append('assistant/message', { turn: t, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }] } });
    log.append('step/end', { turn: t, step: 1 });
    log.append('turn/end', { turn: t, reason: { kind: 'completed' } });
    const last = log.events.at(-1)!;
    log.append('chain/head', { seq: last.seq, hash: last.hash!, keyId: 'bench', signature: 'c2ln' });
  }
  return log.events.map((e) => JSON.stringify(e)).join('\n') + '\n';
};

const time = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
};

const dir = mkdtempSync(join(tmpdir(), 'steerlog-bench-'));
try {
  const file = join(dir, 'bench.jsonl');
  writeFileSync(file, buildLog());
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  const cases: Record<string, () => Promise<unknown> | unknown> = {
    'JSON.parse (read + split + parse)': () => {
      for (const l of readFileSync(file, 'utf8').split('\n')) if (l) JSON.parse(l);
    },
    'audit fold only (auditFile)': () => auditFile(file),
    'verify (chain, SHA-256 + RFC 8785)': () => verifySession(null, fileEnvelopes(file)),
    'audit extras (chain + fates)': () => auditExtras(null, fileEnvelopes(file)),
  };
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [k, fn] of Object.entries(cases)) results[k]!.push(await time(fn));
  console.log(machineLine());
  console.log(`${lines} events, ${ROUNDS} interleaved rounds, medians:`);
  const base = median(results['JSON.parse (read + split + parse)']!);
  for (const [k, ts] of Object.entries(results)) {
    const s = median(ts);
    console.log(`  ${k.padEnd(40)} ${fmt(lines / s)} events/s  ${(s / base).toFixed(2)}× JSON.parse`);
  }
  const fullAudit = median(results['audit fold only (auditFile)']!) + median(results['audit extras (chain + fates)']!);
  console.log(`  ${'steerlog audit (fold + extras)'.padEnd(40)} ${fmt(lines / fullAudit)} events/s  ${(fullAudit / base).toFixed(2)}× JSON.parse`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
