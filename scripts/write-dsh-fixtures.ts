/**
 * Writes the harness-format fixtures in docs/examples/dsh/: `aborted-child.jsonl.zst` (one zstd frame per appended
 * batch, compressed with the `zstd` command-line tool, which must be on PATH) from the batches below, the plain
 * `seeded-child.jsonl` and `retried-stream.jsonl` from the events below, and the expected reports (`<name>.report.txt`,
 * `<name>.report.json`) of every fixture there, from `steerlog audit` itself. These cover what the harness's own
 * packages do not write in scripts/dsh-harness (a child and its descriptors, a route change; a retried stream, which the harness's own `retried` log now shows too). It also writes the reports of the harness's own logs in
 * docs/examples/dsh/harness/ (written by scripts/dsh-harness/write-fixtures.mjs). Run: `npx tsx scripts/write-dsh-fixtures.ts`.
 * test/adapters/dsh/fixtures.test.ts checks the reports, the frames and the decompressed text.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../adapters/cli/main.js';

const dir = fileURLToPath(new URL('../docs/examples/dsh', import.meta.url));
const T0 = 1764500000000;

type Event = { type: string; data: unknown; surfaceOp?: string; sourceEventSeqs?: number[] };
const user = (id: string, text: string, source: Record<string, unknown>) => ({ id, role: 'user', content: [{ type: 'text', text }], source });
const splice = (target: string, start: number, opts: { inserted?: unknown[]; removedCount?: number; canceled?: boolean } = {}): Event => ({
  type: 'agent/inbox/spliced',
  data: {
    target,
    start,
    ...(opts.removedCount !== undefined ? { removedCount: opts.removedCount } : {}),
    inserted: opts.inserted ?? [],
    ...(opts.canceled ? { outcome: 'canceled' } : {}),
  },
});
const model = { kind: 'model', provider: 'mock', model: 'mock' };
const P = user('P', 'split the migration: start a child for the schema', { kind: 'user', rpcId: 'r-1' });
const Q = user('Q', 'then run the tests', { kind: 'user', rpcId: 'r-2' });
const R = user('R', 'Background subagent dsh-child-1 reported: schema ported', { kind: 'subagent-report', form: 'relay', senderSessionId: 'dsh-child-1' });
const N = user('N', 'Subagent dsh-child-1 completed. Its closing message: done', {
  kind: 'subagent-settled',
  form: 'notice',
  summary: 'dsh-child-1 completed',
  senderSessionId: 'dsh-child-1',
});
const spawnArgs = '{"task":"port the schema"}';

/** One batch per append, as the harness's JSONL backend writes them: each becomes one zstd frame. */
const batches: Event[][] = [
  [splice('next-turn', 0, { inserted: [P] }), { type: 'turn/start', data: { turn: 1 } }, splice('next-turn', 0, { removedCount: 1 })],
  [
    { type: 'step/start', data: { turn: 1, step: 1 } },
    { type: 'user/message', data: P, surfaceOp: 'append' },
    { type: 'request/header', data: { header: { config: { provider: 'mock', model: 'mock' } }, reason: 'initial' } },
    { type: 'request/context', data: { provider: 'mock', model: 'mock', contextWindow: 128000 } },
    { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, block: { type: 'tool-call', id: 'call-spawn', name: 'spawn' } } } },
    { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'finish', reason: 'tool-calls' } } },
    {
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', id: 'call-spawn', name: 'spawn', arguments: spawnArgs }], source: model } },
      surfaceOp: 'append',
      sourceEventSeqs: [7, 8],
    },
    { type: 'tool/call', data: { turn: 1, step: 1, callId: 'call-spawn', name: 'spawn', arguments: spawnArgs } },
    { type: 'subagent/start', data: { runId: 'run-1', provider: 'spawn', id: 'dsh-child-1', local: true } },
    {
      type: 'tool/result',
      data: { turn: 1, step: 1, message: { role: 'tool', callId: 'call-spawn', content: [{ type: 'text', text: 'started dsh-child-1' }] } },
      surfaceOp: 'append',
      sourceEventSeqs: [10],
    },
    { type: 'step/end', data: { turn: 1, step: 1 } },
  ],
  [
    splice('next-step', 0, { inserted: [R] }),
    splice('next-step', 0, { removedCount: 1 }),
    { type: 'step/start', data: { turn: 1, step: 2 } },
    { type: 'user/message', data: R, surfaceOp: 'append' },
    { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, block: { type: 'text' } } } },
    { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'Good, now the' } } },
    splice('next-turn', 0, { inserted: [Q] }),
  ],
  [
    // a default cancel mid-step: the queued follow-up is canceled, the half-streamed answer kept as interrupted
    splice('next-turn', 0, { removedCount: 1, canceled: true }),
    {
      type: 'assistant/message',
      data: { turn: 1, step: 2, message: { role: 'assistant', content: [{ type: 'text', text: 'Good, now the' }], source: model }, interrupted: true },
      surfaceOp: 'append',
      sourceEventSeqs: [18, 19],
    },
    { type: 'step/end', data: { turn: 1, step: 2 } },
    { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } } },
  ],
  [
    // the child settles while the parent is idle: its settlement notice is a follow-up, which opens turn 2
    splice('next-turn', 0, { inserted: [N] }),
    { type: 'turn/start', data: { turn: 2 } },
    splice('next-turn', 0, { removedCount: 1 }),
    { type: 'subagent/end', data: { runId: 'run-1', provider: 'spawn', id: 'dsh-child-1', local: true, stopReason: 'completed' } },
    { type: 'step/start', data: { turn: 2, step: 1 } },
    { type: 'user/message', data: N, surfaceOp: 'append' },
    {
      type: 'assistant/message',
      data: { turn: 2, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'The schema is ported; the test run was canceled.' }], source: model } },
      surfaceOp: 'append',
    },
    { type: 'step/end', data: { turn: 2, step: 1 } },
    { type: 'turn/end', data: { turn: 2, reason: { kind: 'completed' } } },
  ],
];

const zstd = (text: string): Buffer => {
  const r = spawnSync('zstd', ['-q', '-c', '-3'], { input: text });
  if (r.status !== 0 || r.error) throw new Error(`zstd failed (is the zstd tool installed?): ${r.error?.message ?? r.stderr.toString()}`);
  return r.stdout;
};

let seq = 0;
const header = JSON.stringify({ version: 0, id: 'dsh-aborted-child', createdAt: T0 });
const frames = batches.map((batch, i) => {
  const lines = batch.map((e) => JSON.stringify({ type: e.type, seq, time: T0 + 100 * ++seq, data: e.data, ...(e.surfaceOp ? { surfaceOp: e.surfaceOp } : {}), ...(e.sourceEventSeqs ? { sourceEventSeqs: e.sourceEventSeqs } : {}) }));
  // the first append materializes the header with the first batch
  return zstd(`${i === 0 ? `${header}\n` : ''}${lines.join('\n')}\n`);
});
writeFileSync(join(dir, 'aborted-child.jsonl.zst'), Buffer.concat(frames));

/** A plain JSONL harness log: the header line, then the events at seq 0, 1, … (times 100 ms apart). */
const writePlain = (name: string, header: Record<string, unknown>, events: Event[]): void => {
  const lines = events.map((e, seq) => JSON.stringify({ type: e.type, seq, time: T0 + 100 * (seq + 1), data: e.data, ...(e.surfaceOp ? { surfaceOp: e.surfaceOp } : {}), ...(e.sourceEventSeqs ? { sourceEventSeqs: e.sourceEventSeqs } : {}) }));
  writeFileSync(join(dir, `${name}.jsonl`), `${[JSON.stringify({ version: 0, id: `dsh-${name}`, createdAt: T0, ...header }), ...lines].join('\n')}\n`);
};
const ev = (type: string, data: unknown = {}, extra: Partial<Event> = {}): Event => ({ type, data, ...extra });
const answer = (turn: number, step: number, text: string, sourceEventSeqs?: number[]): Event =>
  ev('assistant/message', { turn, step, message: { role: 'assistant', content: [{ type: 'text', text }], source: model } }, { surfaceOp: 'append', ...(sourceEventSeqs ? { sourceEventSeqs } : {}) });
/** One turn that runs `m` in one step and answers `text`. */
const turnOf = (turn: number, m: ReturnType<typeof user>, text: string): Event[] => [
  splice('next-turn', 0, { inserted: [m] }),
  ev('turn/start', { turn }),
  splice('next-turn', 0, { removedCount: 1 }),
  ev('step/start', { turn, step: 1 }),
  ev('user/message', m, { surfaceOp: 'append' }),
  answer(turn, 1, text),
  ev('step/end', { turn, step: 1 }),
  ev('turn/end', { turn, reason: { kind: 'completed' } }),
];
const descriptor = { version: 1, mode: 'continuable', provider: 'spawn', label: 'port the schema' };
// a continuable child seeded with its parent's history: the parent was a child itself, so the seed starts with the
// parent's own descriptor (an ancestor's, for this child); the child's descriptor comes with the seed, then the end-seed
const childSeed = [ev('subagent/descriptor', { ...descriptor, label: 'the parent, a child itself' }), ...turnOf(1, user('P', 'port the schema', { kind: 'user' }), 'Ported.')];
writePlain('seeded-child', { parentSession: 'dsh-parent', seedLength: childSeed.length, origin: 'subagent', delegationDepth: 2 }, [
  ...childSeed,
  ev('subagent/descriptor', descriptor),
  ev('session/end-seed'),
  ...turnOf(2, user('I', 'port the views', { kind: 'user' }), 'Views ported.'),
]);

// streamed answers: a failed attempt retried in the same step (only the second attempt's chunks are cited), then a
// route change, and a crash in the middle of the next stream (the file ends there)
const S1 = user('A', 'summarise the incident', { kind: 'user' });
const S2 = user('B', 'in French', { kind: 'user' });
const chunk = (turn: number, step: number, c: unknown): Event => ev('assistant/chunk', { turn, step, chunk: c });
writePlain('retried-stream', {}, [
  splice('next-turn', 0, { inserted: [S1] }), // 0
  ev('turn/start', { turn: 1 }),
  splice('next-turn', 0, { removedCount: 1 }),
  ev('step/start', { turn: 1, step: 1 }),
  ev('user/message', S1, { surfaceOp: 'append' }),
  ev('request/header', { header: { config: { provider: 'mock', model: 'small' } }, reason: 'initial' }), // 5
  ev('request/context', { provider: 'mock', model: 'small', contextWindow: 32000 }),
  chunk(1, 1, { type: 'block-start', index: 0, block: { type: 'text' } }), // 7: the first attempt, which fails
  chunk(1, 1, { type: 'text-delta', index: 0, text: 'The outage' }),
  chunk(1, 1, { type: 'finish', reason: 'error' }),
  chunk(1, 1, { type: 'block-start', index: 0, block: { type: 'text' } }), // 10: the retry
  chunk(1, 1, { type: 'text-delta', index: 0, text: 'The outage lasted 40 minutes.' }),
  chunk(1, 1, { type: 'finish', reason: 'stop' }),
  answer(1, 1, 'The outage lasted 40 minutes.', [10, 11, 12]),
  ev('step/end', { turn: 1, step: 1 }),
  ev('turn/end', { turn: 1, reason: { kind: 'completed' } }), // 15
  splice('next-turn', 0, { inserted: [S2] }),
  ev('turn/start', { turn: 2 }),
  splice('next-turn', 0, { removedCount: 1 }),
  ev('step/start', { turn: 2, step: 1 }),
  ev('user/message', S2, { surfaceOp: 'append' }), // 20
  ev('request/header', { header: { config: { provider: 'mock', model: 'large' } }, reason: 'change' }),
  ev('request/context', { provider: 'mock', model: 'large', contextWindow: 200000 }),
  chunk(2, 1, { type: 'block-start', index: 0, block: { type: 'text' } }),
  chunk(2, 1, { type: 'text-delta', index: 0, text: 'La panne a duré' }),
]);

/** The reports of `file` as `steerlog audit` prints them, written to `<base>.report.txt` and `<base>.report.json`. */
const writeReports = async (file: string, base: string): Promise<void> => {
  for (const json of [false, true]) {
    let stdout = '';
    const io = { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => process.stderr.write(s) } };
    await main(['audit', file, ...(json ? ['--json'] : [])], io);
    writeFileSync(`${base}.report.${json ? 'json' : 'txt'}`, stdout);
  }
  console.log(`${file}: reports written`);
};
for (const file of readdirSync(dir).filter((f) => /\.jsonl(\.zst)?$/.test(f))) await writeReports(join(dir, file), join(dir, file.replace(/\.jsonl(\.zst)?$/, '')));
// the logs the harness itself wrote (scripts/dsh-harness/write-fixtures.mjs): a plain and a zstd log share a name
const real = join(dir, 'harness');
for (const file of readdirSync(real).filter((f) => /\.jsonl(\.zst)?$/.test(f))) await writeReports(join(real, file), join(real, file));
