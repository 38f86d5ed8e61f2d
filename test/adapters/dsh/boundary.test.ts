import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isDshLogError, type DshLogError } from '../../../formats/dsh/dsh-errors.js';
import { openDshLog } from '../../../formats/dsh/dsh-source.js';
import { runCli as run } from '../cli/support/run-cli.js';

/*
 * Forks and children as the harness writes them. Their shapes come from the protocol's description of sessions:
 * constructing a session with a seed appends `session/end-seed` right after it unless the seed already ends with one
 * (so a fork of a resumed session, whose log ends with the end-seed the resume appended, gets no second one); a
 * continuable child's log is seeded with its prefix followed by its own `subagent/descriptor` (so the descriptor is
 * right after the seed, before or after the end-seed); a descriptor inside the seed is an ancestor's; a child with
 * no descriptor of its own after its seed is one the harness does not resume (a one-shot fork of a continuable child).
 */
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-dsh-boundary-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (lines: readonly unknown[]): string => {
  const f = join(tmp, `log-${n++}.jsonl`);
  writeFileSync(f, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return f;
};
const msg = (id: string, kind = 'user') => ({ id, role: 'user', content: [{ type: 'text', text: id }], source: { kind } });
const DESCRIPTOR = { version: 1, mode: 'continuable', provider: 'spawn', label: 'port the schema' };
type Ev = { type: string; data: unknown };
const e = (type: string, data: unknown = {}): Ev => ({ type, data });
/** The parent's history a fork inherits: turn 1 ran P; Q was still queued (a fork never inherits it). */
const PARENT: Ev[] = [
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [msg('P')] }),
  e('turn/start', { turn: 1 }),
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }),
  e('step/start', { turn: 1, step: 1 }),
  e('user/message', msg('P')),
  e('step/end', { turn: 1, step: 1 }),
  e('turn/end', { turn: 1, reason: { kind: 'completed' } }),
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [msg('Q')] }),
];
/** The session's own work after the boundary: X opens turn `t` (after a seed, turn numbers continue after its own). */
const own = (t: number): Ev[] => [
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [msg('X')] }),
  e('turn/start', { turn: t }),
  e('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }),
  e('step/start', { turn: t, step: 1 }),
  e('user/message', msg('X')),
  e('step/end', { turn: t, step: 1 }),
  e('turn/end', { turn: t, reason: { kind: 'completed' } }),
];
const OWN = own(2);
const END_SEED = e('session/end-seed');
const log = (header: Record<string, unknown>, events: readonly Ev[]): string =>
  file([{ version: 0, id: 'fork-1', createdAt: 1000, parentSession: 'parent-1', ...header }, ...events.map((ev, seq) => ({ type: ev.type, seq, time: 1001 + seq, data: ev.data }))]);
const child = (extra: Record<string, unknown>) => ({ origin: 'subagent', delegationDepth: 1, ...extra });

const readAll = async (f: string) => {
  const opened = openDshLog(f);
  const events: { seq: number; type: string; data: Record<string, unknown> }[] = [];
  for await (const ev of opened.envelopes) events.push(ev as never);
  return { created: events[0]!.data, types: events.map((ev) => ev.type), summary: opened.summary() };
};
const audit = async (f: string) => {
  const r = await run('audit', f, '--json');
  return { code: r.code, out: JSON.parse(r.stdout) };
};
const refusal = async (f: string): Promise<DshLogError> => {
  try {
    await readAll(f);
  } catch (err) {
    if (isDshLogError(err)) return err;
    throw err;
  }
  throw new Error('no refusal');
};

describe("a fork's boundary", () => {
  it('the usual fork: the end-seed right after the seed; the inbox starts empty after it (Q is not inherited)', async () => {
    const f = log({ seedLength: 8 }, [...PARENT, END_SEED, ...OWN]);
    const { created, summary } = await readAll(f);
    expect(created).toMatchObject({ kind: 'ordinary', seedLength: 8 });
    expect([summary.seed, summary.child]).toEqual([{ length: 8, endSeedSeq: 8 }, null]);
    const { code, out } = await audit(f);
    expect(code).toBe(0);
    expect(out).toMatchObject({ ok: true, inbox: { nextTurn: [], nextStep: [] }, consumedWork: { endTurn: 2, droppedUnrun: false } });
    expect((await run('audit', f)).stdout).toContain('  seed: 8 inherited events (the header\'s seedLength), closed by session/end-seed at harness seq 8\n');
  });

  it("a fork whose seed already ends with session/end-seed (no second one) reads as the same session: the seed's own end-seed is the boundary", async () => {
    // the parent was resumed (which appended an end-seed) and forked before it did anything else
    const inherited = log({ seedLength: 9 }, [...PARENT, END_SEED, ...OWN]);
    const usual = log({ seedLength: 8 }, [...PARENT, END_SEED, ...OWN]);
    const { created, summary } = await readAll(inherited);
    expect(created).toMatchObject({ seedLength: 8 });
    expect(summary.seed).toEqual({ length: 9, endSeedSeq: 8 });
    const a = await audit(inherited);
    const b = await audit(usual);
    expect(a.code).toBe(0);
    expect({ ...a.out, stream: null, source: { ...a.out.source, seed: null } }).toEqual({ ...b.out, stream: null, source: { ...b.out.source, seed: null } });
    const text = (await run('audit', inherited)).stdout;
    expect(text).toContain(
      "  seed: 9 inherited events (the header's seedLength), closed by session/end-seed at harness seq 8 (the seed's own last event: the harness writes no second one): the report reads a seed of 8 events\n",
    );
    const why = await run('why', inherited, 'X');
    expect(why.stdout.split('\n')[0]).toBe('message X in session fork-1: ENTERED');
    expect((await run('why', inherited, 'Q')).stdout).toContain('Q');
  });

  it("steerlog's own fork rule is unchanged: its own log with that seedLength is still refused", async () => {
    const { created } = await readAll(log({ seedLength: 9 }, [...PARENT, END_SEED, ...OWN]));
    const events: Record<string, unknown>[] = [];
    for await (const ev of openDshLog(log({ seedLength: 9 }, [...PARENT, END_SEED, ...OWN])).envelopes) events.push(ev as never);
    events[0] = { ...events[0], data: { ...created, seedLength: 9 } };
    const f = join(tmp, 'steerlog-own.jsonl');
    writeFileSync(f, events.map((ev) => JSON.stringify(ev)).join('\n') + '\n');
    const r = JSON.parse((await run('audit', f, '--json', '--format', 'steerlog')).stdout);
    expect(r.errors).toEqual([{ seq: 10, code: 'impossible-event', message: expect.stringContaining("a fork's seed of 9 events ends with session/end-seed at seq 10") }]);
  });

  it('a fork with no end-seed at its boundary is refused by the fold, naming the harness seq', async () => {
    const { code, out } = await audit(log({ seedLength: 8 }, [...PARENT, ...OWN]));
    expect(code).toBe(1);
    expect(out.errors).toEqual([{ seq: 9, code: 'impossible-event', message: expect.stringMatching(/a fork's seed of 8 events ends with session\/end-seed at seq 9 \(harness seq 8\)$/) }]);
    expect(out.source.seed).toEqual({ length: 8, endSeedSeq: null });
  });
});

describe("a child's descriptor", () => {
  it.each([
    ['written with the seed (the end-seed after it)', { seedLength: 8 }, [...PARENT, e('subagent/descriptor', DESCRIPTOR), END_SEED], 9, { length: 8, endSeedSeq: 9 }, 8],
    ['after the end-seed', { seedLength: 8 }, [...PARENT, END_SEED, e('subagent/descriptor', DESCRIPTOR)], 8, { length: 8, endSeedSeq: 8 }, 9],
    ["after a seed that ends with its own end-seed (none appended)", { seedLength: 9 }, [...PARENT, END_SEED, e('subagent/descriptor', DESCRIPTOR)], 8, { length: 9, endSeedSeq: 8 }, 9],
    ['first, with no seed', {}, [e('subagent/descriptor', DESCRIPTOR), END_SEED], undefined, null, 0],
    ['after an end-seed, with no seed', {}, [END_SEED, e('subagent/descriptor', DESCRIPTOR)], undefined, null, 1],
  ])('%s: the kind is its mode', async (_name, header, before, seedLength, seed, descriptorSeq) => {
    for (const mode of ['continuable', 'one-shot']) {
      const events = before.map((ev) => (ev.type === 'subagent/descriptor' ? e(ev.type, { ...DESCRIPTOR, mode }) : ev));
      const f = log(child(header), [...events, ...own(seedLength === undefined ? 1 : 2)]);
      const { created, summary } = await readAll(f);
      expect(created).toEqual({
        sessionId: 'fork-1',
        createdAt: 1000,
        kind: mode,
        parentSession: 'parent-1',
        origin: 'subagent',
        delegationDepth: 1,
        ...(seedLength !== undefined ? { seedLength } : {}),
      });
      expect([summary.seed, summary.child]).toEqual([seed, { kind: mode, descriptorSeq }]);
      const { code, out } = await audit(f);
      expect(code).toBe(0);
      expect(out).toMatchObject({ ok: true, consumedWork: { endTurn: seedLength === undefined ? 1 : 2 }, inbox: { nextTurn: [], nextStep: [] } });
      expect((await run('audit', f)).stdout).toContain(`  child: ${mode}, from its subagent/descriptor at harness seq ${descriptorSeq}\n`);
    }
  });

  it("a child whose only descriptor is an ancestor's, inside its seed: no descriptor of its own, read as one-shot", async () => {
    const seed = [e('subagent/descriptor', DESCRIPTOR), ...PARENT];
    const f = log(child({ seedLength: 9 }), [...seed, END_SEED, ...OWN]);
    const { created, summary } = await readAll(f);
    expect(created).toMatchObject({ kind: 'one-shot', seedLength: 9 });
    expect(summary.child).toEqual({ kind: 'one-shot', descriptorSeq: null });
    expect((await audit(f)).code).toBe(0);
    expect((await run('audit', f)).stdout).toContain(
      '  child: no subagent/descriptor of its own after its seed (the harness never resumes such a child): read as one-shot\n',
    );
    // a child that never had a seed or a descriptor reads the same way
    expect((await readAll(log(child({}), own(1)))).summary.child).toEqual({ kind: 'one-shot', descriptorSeq: null });
  });

  it('a second descriptor, or one after the child began its own work, is refused (dsh-child-descriptor); what came before is reported', async () => {
    const twice = log(child({ seedLength: 8 }), [...PARENT, END_SEED, e('subagent/descriptor', DESCRIPTOR), ...OWN.slice(0, 2), e('subagent/descriptor', DESCRIPTOR)]);
    const r = await refusal(twice);
    expect({ code: r.code, seq: r.seq, line: r.line, message: r.message }).toEqual({
      code: 'dsh-child-descriptor',
      seq: 12,
      line: 14,
      message: "line 14, harness seq 12: subagent/descriptor: a child's descriptor comes once, right after its seed (or its end-seed), and its own is at harness seq 9",
    });
    const { code, out } = await audit(twice);
    expect(code).toBe(1);
    expect(out).toMatchObject({ ok: false, events: 13, errors: [{ seq: 13, code: 'dsh-child-descriptor' }], turns: [{ turn: 1 }, { turn: 2, endSeq: null }] });
    // two right after the seed: the second is not its own
    const two = await refusal(log(child({ seedLength: 8 }), [...PARENT, e('subagent/descriptor', DESCRIPTOR), e('subagent/descriptor', DESCRIPTOR), END_SEED, ...OWN]));
    expect([two.code, two.seq, two.line]).toEqual(['dsh-child-descriptor', 9, 11]);
    const late = await refusal(log(child({ seedLength: 8 }), [...PARENT, END_SEED, OWN[0]!, e('subagent/descriptor', DESCRIPTOR)]));
    expect([late.code, late.seq, late.reason]).toEqual([
      'dsh-child-descriptor',
      10,
      "subagent/descriptor: a child's descriptor comes once, right after its seed (or its end-seed), and it has none right after its seed",
    ]);
  });
});
