import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { streamFileName } from '../../../adapters/store/jsonl/index.js';
import { FakeEsdb } from '../store/eventstoredb/fake/esdb-fake.js';
import { dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-export-'));
  dirs.push(d);
  return d;
};

/** demo → export → audit <log.jsonl>: the exported file is the exchange format audit reads, with the same verdict. */
const roundTrip = async (spec: string): Promise<void> => {
  const demo = await run('demo', '--store', spec, '--session', 'rt-1', '--json');
  expect(demo.code, demo.stderr).toBe(0);
  const exported = await run('export', spec, 'rt-1');
  expect(exported.code, exported.stderr).toBe(0);
  expect(exported.stderr).toBe('');
  const lines = exported.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(40);
  expect(JSON.parse(lines[0]!)).toMatchObject({ seq: 0, type: 'session/created' });
  const file = join(tmp(), 'rt-1.jsonl');
  writeFileSync(file, exported.stdout);
  const fromFile = await run('audit', file, '--json');
  expect(fromFile.code).toBe(0);
  const fromStore = await run('audit', '--store', spec, 'rt-1', '--json');
  expect(fromStore.code).toBe(0);
  // the same report either way; read from a store it also says what the store left unread (here: nothing)
  const { storeNotes, ...storeReport } = JSON.parse(fromStore.stdout) as { storeNotes?: unknown };
  expect(storeNotes).toEqual([]);
  expect(JSON.parse(fromFile.stdout)).toEqual(storeReport);
  expect(JSON.parse(fromFile.stdout)).toEqual(JSON.parse(demo.stdout));
  expect((await run('export', spec, 'no-such-session')).code).toBe(2);
};

describe('demo → export → audit on every store', () => {
  it('JSONL', async () => {
    await roundTrip(`jsonl:${tmp()}`);
  });

  it('PostgreSQL', async () => {
    const schema = uniqueSchema('export');
    try {
      await roundTrip(`${PG_URL}?schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  });

  it('EventStoreDB (the protocol fake)', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    try {
      await roundTrip(fake.connectionString);
    } finally {
      await fake.stop();
    }
  });
});

describe('audit <stream file>', () => {
  it('recognises a JSONL store stream file by its header line and audits its committed events', async () => {
    const dir = tmp();
    expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'sf-1')).code).toBe(0);
    const file = join(dir, 'streams', streamFileName('sf-1').fileName);
    expect(readdirSync(join(dir, 'streams'))).toContain(streamFileName('sf-1').fileName);
    const r = await run('audit', file, '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stream: 'sf-1', events: 40, ok: true });
    // a copy outside any store is read line by line, checksums verified
    const copy = join(tmp(), 'copy.jsonl');
    writeFileSync(copy, (await import('node:fs')).readFileSync(file));
    expect(JSON.parse((await run('audit', copy, '--json')).stdout)).toMatchObject({ stream: 'sf-1', events: 40, ok: true });
  });
});
