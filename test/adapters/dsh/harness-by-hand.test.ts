import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli as run } from '../cli/support/run-cli.js';

/**
 * The committed logs the harness itself wrote (docs/examples/dsh/harness/, seed 7), against what a reader derives by
 * hand from the scenario the script ran (scripts/dsh-harness/write-fixtures.mjs): which input each turn claimed, each
 * input's class and fate, what `why` and `audit --at` say. Inputs are named by their text, read from the log itself
 * (the harness gives them random ids).
 */
const dir = fileURLToPath(new URL('../../../docs/examples/dsh/harness', import.meta.url));

/** Every input's id by its first text block, from the splices that admitted them. */
const idsByText = (file: string): Record<string, string> => {
  const ids: Record<string, string> = {};
  for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { type: string; data?: { inserted?: { id: string; content: { text?: string }[] }[] } };
    if (e.type === 'agent/inbox/spliced') for (const m of e.data?.inserted ?? []) ids[m.content[0]!.text!] = m.id;
  }
  return ids;
};
const auditJson = async (file: string, ...args: string[]) => JSON.parse((await run('audit', join(dir, file), '--json', ...args)).stdout);

describe('queued-steered (the harness’s own log), by hand', () => {
  const id = idsByText('queued-steered.jsonl');
  const [first, note, steer, fu1, fu2, idle] = [
    'first prompt, with a screenshot',
    'a note injected during step 1',
    'steer: look at the other one too',
    'queued follow-up 1',
    'queued follow-up 2',
    'context injected while idle, never woken',
  ].map((t) => id[t]!);

  it('turns claim what the protocol says: the prompt, then the context and the steer at step boundaries; follow-ups as their own turns', async () => {
    const q = await auditJson('queued-steered.jsonl');
    expect(q.turns.map((t: { claimed: string[]; reason: string; steps: number }) => [t.claimed, t.reason, t.steps])).toEqual([
      [[first, note, steer], 'completed', 3], // the note claimed at step 2, the steer (from a tool body) at step 3
      [[fu1], 'completed', 1], // queued follow-ups run as their own turns, in order
      [[fu2], 'completed', 1],
    ]);
    expect(q.messages.map((m: { id: string; class: string | null; fate: { fate: string } }) => [m.id, m.class, m.fate.fate])).toEqual([
      [first, 'prompt', 'entered'],
      [note, 'context', 'entered'],
      [steer, 'steering', 'entered'],
      [fu1, 'prompt', 'entered'],
      [fu2, 'prompt', 'entered'],
      [idle, null, 'pending'], // context injected without a wake stays parked
    ]);
    expect(q.queue).toEqual([{ id: idle, placement: 'context' }]);
    expect(q.source).toMatchObject({ format: 'dsh', seqOffset: 1, compression: 'none', frames: null, tornTail: null, seed: null, child: null, synthesized: null, error: null });
  });

  it.each([
    ['steer', 'ENTERED', ['seq 40', 'admitted to next-step', 'claimed from next-step by turn 1 for step 3', 'entered the model in turn 1 step 3']],
    ['idle', 'PENDING', ['seq 85', 'admitted to next-step (no actor recorded) (source plugin)']],
  ])('why of the %s input reads through the same mapping', async (which, verdict, facts) => {
    const input = (which === 'steer' ? steer : idle)!;
    for (const format of [[], ['--format', 'dsh']]) {
      const r = await run('why', join(dir, 'queued-steered.jsonl'), input, ...format);
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^message ${input} in session harness-queued-steered: ${verdict}\\b`));
      for (const f of facts) expect(r.stdout).toContain(f);
    }
  });

  it('audit --at takes the report seq: harness seq 39 (the steer, admitted during the tool) is report seq 40', async () => {
    const r = await auditJson('queued-steered.jsonl', '--at', '40');
    expect(r).toMatchObject({ ok: true, events: 41, at: { seq: 40 }, inbox: { nextTurn: [fu1, fu2], nextStep: [steer] } });
    expect(r.turns).toEqual([{ turn: 1, startSeq: 2, endSeq: null, reason: null, steps: 2, claimed: [first, note] }]);
    // the events after the limit are not counted: the summary covers what the report covers
    expect(r.source.harnessEvents).toBe(40);
    const early = await auditJson('queued-steered.jsonl', '--at', '9');
    expect(early.source.harnessEvents).toBe(9);
  });

  it('why of a tool call: requested, started, its result with the result message’s id (text and --json)', async () => {
    const results = readFileSync(join(dir, 'queued-steered.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"tool/result"'))
      .map((l) => JSON.parse(l) as { seq: number; data: { message: { id: string; source: { callId: string } } } });
    const result = results.find((e) => e.data.message.source.callId === 'call-qs-0')!;
    const json = JSON.parse((await run('why', join(dir, 'queued-steered.jsonl'), 'call-qs-0', '--json')).stdout);
    expect(json.found).toBe('tool-call');
    expect(json.toolCall).toMatchObject({ started: { name: 'look' }, result: { seq: result.seq + 1, messageId: result.data.message.id, isError: false } });
    const text = await run('why', join(dir, 'queued-steered.jsonl'), 'call-qs-0');
    expect(text.stdout).toContain(`  seq ${result.seq + 1}  `);
    expect(text.stdout).toContain(` result (message ${result.data.message.id}): ok\n`);
    expect(text.stdout).toContain('answered (message ');
    expect(text.stdout).toContain('tool calls call-qs-0, call-qs-1');
  });
});

describe('forked (the harness’s own log), by hand', () => {
  it('a fork whose seed ends with the resume’s end-seed reads with that end-seed as its boundary; the parent’s pending work is not inherited', async () => {
    const id = idsByText('forked.jsonl');
    const header = JSON.parse(readFileSync(join(dir, 'forked.jsonl'), 'utf8').split('\n')[0]!) as { seedLength: number; parentSession: string };
    const r = await auditJson('forked.jsonl');
    expect(r).toMatchObject({ ok: true, inbox: { nextTurn: [], nextStep: [] }, lineage: { parentSession: header.parentSession } });
    // the seed (the header's seedLength) already ends with the resume's end-seed, its last event: no second one
    expect(r.source).toMatchObject({ seed: { length: header.seedLength, endSeedSeq: header.seedLength - 1 }, child: null, error: null });
    expect(r.turns.map((t: { turn: number; claimed: string[] }) => [t.turn, t.claimed])).toEqual([
      [1, [id['before the restart']]],
      [2, [id['stopped before the restart']]],
      [3, [id['the fork’s own prompt']]],
    ]);
    // still queued in the parent when it was forked (in the seed): not pending here
    expect(id['queued before the restart']).toBeDefined();
    expect(r.queue).toEqual([]);
    expect(r.consumedWork).toMatchObject({ endTurn: 3, droppedUnrun: false });
    const why = await run('why', join(dir, 'forked.jsonl'), id['the fork’s own prompt']!);
    expect(why.stdout).toContain(`message ${id['the fork’s own prompt']} in session harness-forked: ENTERED\n`);
  });
});
