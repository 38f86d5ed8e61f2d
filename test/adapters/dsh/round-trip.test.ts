import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectLogFormat } from '../../../audit/log-format.js';
import { runCli as run } from '../cli/support/run-cli.js';
import { framesOf, toHarnessLines } from './support/harness-log.js';
import { steerlogLogs } from './support/steerlog-logs.js';

/**
 * The model of the mapping: a steerlog log written in the harness's shape (header for session/created, seq − 1, no
 * ids, metadata or hashes, surface ops, tool-call block ids) audits exactly like the steerlog log, apart from what
 * the harness's format cannot carry (the chain, actors) and the `source` that says how it was read.
 */
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-round-trip-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Out = Record<string, unknown> & { messages: { fate: { admitted: { actor: string | null } | null } }[]; errors: { message: string }[]; actions: { actor: string | null }[] };
const audit = async (file: string): Promise<{ code: number; out: Out }> => {
  const r = await run('audit', file, '--json');
  return { code: r.code, out: JSON.parse(r.stdout) as Out };
};
/** What the harness's format cannot carry, taken out of a report: the chain, actors, the reader's summary. */
const comparable = (o: Out) => {
  const { chain: _c, source: _s, ...rest } = o;
  return {
    ...rest,
    errors: o.errors.map((e) => ({ ...e, message: e.message.replace(/ \(harness seq \d+\)$| \(the harness header\)$/, '') })),
    messages: o.messages.map((m) => ({ ...m, fate: { ...m.fate, admitted: m.fate.admitted && { ...m.fate.admitted, actor: null, actorKind: null } } })),
    actions: o.actions.map((a) => ({ ...a, actor: null, actorKind: null })),
  };
};

describe('a steerlog log in the harness shape audits identically', () => {
  it('for every example log (valid and refused) and a runtime-written session, plain and in frames', async () => {
    const logs = await steerlogLogs();
    expect(logs.length).toBeGreaterThanOrEqual(6);
    for (const [name, events] of logs) {
      const original = join(tmp, `${name}.steerlog.jsonl`);
      writeFileSync(original, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      const lines = toHarnessLines(events);
      const plain = join(tmp, `${name}.jsonl`);
      writeFileSync(plain, `${lines.join('\n')}\n`);
      const zst = join(tmp, `${name}.jsonl.zst`);
      writeFileSync(zst, framesOf(lines, [1, 4, 9]));
      expect(await detectLogFormat(original), name).toBe('steerlog');
      expect(await detectLogFormat(plain), name).toBe('dsh');
      expect(await detectLogFormat(zst), name).toBe('dsh');
      const want = await audit(original);
      for (const file of [plain, zst]) {
        const got = await audit(file);
        expect(got.code, name).toBe(want.code);
        expect(comparable(got.out), name).toEqual(comparable(want.out));
        expect(got.out.source, name).toMatchObject({ format: 'dsh', ignored: [], error: null });
      }
      for (const id of ['A', 'B', 'm1', 'c1', 'ctx-1']) {
        const [w, g] = [await run('why', original, id, '--json'), await run('why', plain, id, '--json')];
        expect(g.code, `${name} why ${id}`).toBe(w.code);
        const strip = (s: string) => {
          const { steps: _steps, synthesized, ...o } = JSON.parse(s) as { facts: { metadata?: unknown }[]; fate: { admitted: { actor: unknown } | null } | null; toolCall: { started: { actor: unknown } | null } | null; error: unknown; steps?: unknown; synthesized?: unknown };
          // none of these logs ends inside a turn: the reader synthesized no closing
          expect(synthesized ?? null).toBeNull();
          return {
            ...o,
            error: o.error === null ? null : 'refused',
            facts: o.facts.map(({ metadata: _m, ...f }) => f),
            fate: o.fate && { ...o.fate, admitted: o.fate.admitted && { ...o.fate.admitted, actor: null, actorKind: null } },
            // `staged` is found through causation metadata, which the harness's format does not have
            toolCall: o.toolCall && { ...o.toolCall, staged: [], started: o.toolCall.started && { ...o.toolCall.started, actor: null } },
          };
        };
        expect(strip(g.stdout), `${name} why ${id}`).toEqual(strip(w.stdout));
      }
    }
  });

  it('a steerlog store stream file and an empty file are still read as steerlog', async () => {
    const empty = join(tmp, 'empty.jsonl');
    writeFileSync(empty, '');
    expect(await detectLogFormat(empty)).toBe('steerlog');
    const store = join(tmp, 'store');
    expect((await run('demo', '--store', `jsonl:${store}`, '--session', 'rt', '--json')).code).toBe(0);
    const streams = readdirSync(join(store, 'streams'));
    expect(await detectLogFormat(join(store, 'streams', streams[0]!))).toBe('steerlog');
  });
});
