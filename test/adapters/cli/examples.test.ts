import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { buildExamples } from '../../../docs/examples/build-examples.js';

const dir = fileURLToPath(new URL('../../../docs/examples', import.meta.url));


describe('docs/examples', () => {
  const examples = buildExamples();
  it('ships every example, reproducible byte for byte from the deciders', () => {
    const shipped = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => f.replace(/\.jsonl$/, ''));
    expect(shipped.sort()).toEqual(Object.keys(examples).sort());
    for (const [name, log] of Object.entries(examples)) expect(readFileSync(join(dir, `${name}.jsonl`), 'utf8')).toBe(log);
  });

  it.each(Object.keys(buildExamples()))('audit of %s prints exactly the committed reports', async (name) => {
    const file = join(dir, `${name}.jsonl`);
    const json = await run('audit', file, '--json');
    expect(json.stdout).toBe(readFileSync(join(dir, `${name}.report.json`), 'utf8'));
    const report = JSON.parse(json.stdout);
    expect(json.code).toBe(report.ok ? 0 : 1);
    expect(name.startsWith('invalid-')).toBe(!report.ok);
    const text = await run('audit', file);
    expect(text.stdout).toBe(readFileSync(join(dir, `${name}.report.txt`), 'utf8'));
    expect(text.code).toBe(json.code);
  });
});

describe('steerlog audit', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'steerlog-audit-'));
  const write = (name: string, text: string) => {
    const f = join(tmp, name);
    writeFileSync(f, text);
    return f;
  };

  it('prints exactly one JSON object with every documented field', async () => {
    const r = await run('audit', join(dir, 'queue-steer-context.jsonl'), '--json');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['format', 'version', 'stream', 'events', 'ok', 'errors', 'inbox', 'turns', 'consumedWork', 'queue', 'at', 'times', 'messages', 'chain', 'actions']);
  });

  it.each([
    ['invalid-duplicate-pending-id', 10, 'duplicate-pending-id', ['B']],
    ['invalid-splice-does-not-fit', 2, 'invalid-splice', ['A']],
    ['invalid-schema', 4, 'invalid-event-data', []],
  ])('%s: names the seq and the reason and applies nothing past it', async (name, seq, code, nextTurn) => {
    const r = JSON.parse((await run('audit', join(dir, `${name}.jsonl`), '--json')).stdout);
    expect(r.ok).toBe(false);
    expect(r.events).toBe(seq);
    expect(r.errors).toEqual([{ seq, code, message: expect.stringContaining(`seq ${seq}`) }]);
    expect(r.inbox.nextTurn).toEqual(nextTurn);
  });

  it('refuses text that is not JSON, an unknown type, a seq gap, and a blank line inside the log', async () => {
    const good = readFileSync(join(dir, 'blocked-and-dropped.jsonl'), 'utf8').split('\n').filter(Boolean);
    const cases: [string, string[], string, number][] = [
      ['not-json', [good[0]!, '{oops'], 'invalid-json', 1],
      ['unknown', [good[0]!, JSON.stringify({ ...JSON.parse(good[1]!), type: 'agent/unknown' })], 'unknown-event-type', 1],
      ['gap', [good[0]!, good[2]!], 'seq-out-of-order', 2],
      ['blank', [good[0]!, '', good[1]!], 'invalid-json', 1],
    ];
    for (const [name, lines, code, seq] of cases) {
      const r = await run('audit', write(`${name}.jsonl`, lines.join('\n') + '\n'), '--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ events: 1, errors: [{ seq, code }] });
    }
  });

  it('an ignorable unknown event is accepted', async () => {
    const good = readFileSync(join(dir, 'blocked-and-dropped.jsonl'), 'utf8').split('\n').filter(Boolean);
    const ign = JSON.stringify({ ...JSON.parse(good[1]!), type: 'plugin/metrics', data: { x: 1 }, ignorable: true });
    expect((await run('audit', write('ign.jsonl', [good[0]!, ign].join('\n')), '--json')).code).toBe(0);
  });

  it('an empty or whitespace-only file is an invalid log (no session/created), exit 1, naming seq 0', async () => {
    for (const [name, text] of [['empty.jsonl', ''], ['blank.jsonl', '\n  \n\t\n']] as const) {
      const r = await run('audit', write(name, text), '--json');
      expect(r.code).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report).toMatchObject({ ok: false, events: 0, errors: [{ seq: 0, code: 'impossible-event' }] });
      expect(report.errors[0].message).toMatch(/^seq 0: .*session\/created/);
    }
  });

  it('every refusal names its seq in the message', async () => {
    const good = readFileSync(join(dir, 'blocked-and-dropped.jsonl'), 'utf8').split('\n').filter(Boolean);
    const broken = [
      [good[0]!, '{not json'],
      [good[0]!, JSON.stringify({ ...JSON.parse(good[1]!), seq: 'x' })],
      [good[0]!, JSON.stringify({ ...JSON.parse(good[1]!), seq: 5 })],
      [good[0]!, JSON.stringify({ ...JSON.parse(good[1]!), type: 'no/such-type' })],
      [good[1]!],
    ];
    for (const [i, lines] of broken.entries()) {
      const report = JSON.parse((await run('audit', write(`broken-${i}.jsonl`, lines.join('\n')), '--json')).stdout);
      expect(report.ok).toBe(false);
      const e = report.errors[0];
      expect(e.message, e.message).toMatch(new RegExp(`^seq ${e.seq}\\b`));
    }
  });

  it('exits 2 on usage errors', async () => {
    expect((await run('audit')).code).toBe(2);
    expect((await run('audit', 'a.jsonl', 'b.jsonl')).code).toBe(2);
    expect((await run('audit', '--bogus', 'a.jsonl')).code).toBe(2);
    expect((await run('audit', join(tmp, 'missing.jsonl'))).code).toBe(3); // a missing file cannot be read: 3
    expect((await run('frobnicate')).code).toBe(2);
    expect((await run()).code).toBe(2);
    expect((await run('help')).code).toBe(0);
  });
});
