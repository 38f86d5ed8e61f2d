import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { collect } from '../../contract/event-store.contract.js';
import { CUTOFF, populate } from '../archive/support/archive-fixture.js';
import { runCli } from './support/run-cli.js';

const root = mkdtempSync(join(tmpdir(), 'steerlog-cli-archive-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const populated = async (): Promise<string> => {
  const dir = join(root, `store-${n++}`);
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  await populate(store);
  await store.close();
  return `jsonl:${dir}`;
};
const cutoff = new Date(CUTOFF).toISOString();

describe('steerlog archive', () => {
  it('usage errors exit 2: no --before, a --before that is no time, an archive as the store, a stray argument', async () => {
    for (const argv of [
      ['archive'],
      ['archive', '--before', 'last week'],
      ['archive', '--store', 'archive:x.jsonl.gz', '--before', '1'],
      ['archive', '--before', '1', 'extra'],
    ]) {
      const r = await runCli(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^steerlog archive: .*\(steerlog archive --help shows the usage\)\n$/);
      const j = await runCli(...argv, '--json');
      expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'usage' } });
    }
  });

  it('--dry-run lists what would move and writes nothing; the run prints what moved and what stayed, and why', async () => {
    const spec = await populated();
    const out = join(root, 'human.jsonl.gz');
    const dry = await runCli('archive', '--store', spec, '--before', cutoff, '--out', out, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout.split('\n')[0]).toBe(`dry run: 3 ended sessions (81 events) before ${cutoff} would move; nothing written or deleted`);
    expect(existsSync(out)).toBe(false);
    const run = await runCli('archive', '--store', spec, '--before', String(CUTOFF), '--out', out);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`archived 3 sessions (81 events) to ${out}, verified`);
    expect(lines[1]).toMatch(/^ {2}old-a {2}27 events {2}head 26:[0-9a-f]{64} {2}deleted from the store$/);
    expect(lines.slice(4)).toEqual([
      'kept 4 sessions in the store:',
      '  old-parent-2  family-not-ended',
      '  new-child  recent',
      '  new-b  recent',
      '  old-open  open-turn',
    ]);
    const again = await runCli('archive', '--store', spec, '--before', cutoff, '--out', out);
    expect(again.stdout.split('\n')[0]).toBe(`no ended session before ${cutoff} in ${spec}: nothing written`);
  });

  it('a jsonl: directory without a store is exit 3 (store-io), and nothing is created', async () => {
    const dir = join(root, 'no-store-here');
    const r = await runCli('archive', '--store', `jsonl:${dir}`, '--before', cutoff, '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
    expect(existsSync(dir)).toBe(false);
  });

  it('an existing --out is never overwritten: exit 3, archive-exists, nothing deleted', async () => {
    const spec = await populated();
    const out = join(root, 'exists.jsonl.gz');
    writeFileSync(out, 'something else');
    const r = await runCli('archive', '--store', spec, '--before', cutoff, '--out', out, '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'archive-exists' } });
    const store = await openJsonlEventStore(spec.slice('jsonl:'.length), { readOnly: true });
    expect((await collect(() => store.read('old-a'))).length).toBe(27);
    await store.close();
  });
});
