import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../adapters/cli/main.js';
import { runCli as run } from './support/run-cli.js';
import { streamFileName } from '../../../adapters/store/jsonl/index.js';
import { dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-cli-conv-'));
  dirs.push(d);
  return d;
};
/** One line, no stack frame. */
const expectOneLine = (text: string): void => {
  expect(text.trimEnd().split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
};
const demoStore = async (): Promise<string> => {
  const dir = tmp();
  expect((await run('demo', '--store', `jsonl:${dir}`, '--session', 'c-1', '--json')).code).toBe(0);
  return dir;
};

describe('a conventional CLI', () => {
  it('--version prints the package version', async () => {
    const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
    expect(await run('--version')).toEqual({ code: 0, stdout: `steerlog ${version}\n`, stderr: '' });
  });

  it('<command> --help prints that command’s usage and exits 0', async () => {
    for (const name of Object.keys(COMMANDS)) {
      for (const flag of ['--help', '-h']) {
        const r = await run(name, flag);
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^usage: steerlog ${name}\\b`));
        expect(r.stderr).toBe('');
      }
    }
  });

  it('the top-level help lists every command, the exit codes and where the docs are', async () => {
    const r = await run('--help');
    expect(r.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(r.stdout).toContain(`  ${name} `);
    expect(r.stdout).toMatch(/exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 /);
    expect(r.stdout).toContain('README.md');
  });

  it('-- ends the options', async () => {
    const json = await run('audit', '--json', '--', '--json');
    expect(json.code).toBe(3); // the file "--json" does not exist: a missing file, not a flag
    expect(JSON.parse(json.stdout).error.message).toContain('cannot read --json');
    expect((await run('audit', '--bogus', 'x.jsonl')).code).toBe(2);
  });
});

describe('failures are not verdicts', () => {
  it('a jsonl: path that does not exist is a store error (exit 3), and nothing is created', async () => {
    const missing = join(tmp(), 'nope');
    const r = await run('audit', '--store', `jsonl:${missing}`, 's');
    expect(r.code).toBe(3);
    expectOneLine(r.stderr);
    expect(r.stderr).toContain('no JSONL store');
    expect(existsSync(missing)).toBe(false);
    const j = await run('audit', '--store', `jsonl:${missing}`, 's', '--json');
    expect(j.code).toBe(3);
    expect(j.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
    expect((await run('export', `jsonl:${missing}`, 's')).code).toBe(3);
    expect((await run('store', 'check', `jsonl:${missing}`)).code).toBe(3);
    expect(existsSync(missing)).toBe(false);
  });

  it('an unreachable PostgreSQL is exit 3 with one line that does not repeat itself', async () => {
    const r = await run('audit', '--store', 'postgres://postgres@127.0.0.1:1/test', 's');
    expect(r.code).toBe(3);
    expectOneLine(r.stderr);
    expect(r.stderr.match(/ECONNREFUSED/g)).toHaveLength(1);
    const j = await run('audit', '--store', 'postgres://postgres@127.0.0.1:1/test', 's', '--json');
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
  });

  it('a flipped byte in a stream file is exit 3 naming the file, not a verdict and not a stack trace', async () => {
    const dir = await demoStore();
    const file = join(dir, 'streams', streamFileName('c-1').fileName);
    const bytes = readFileSync(file);
    bytes[bytes.length - 30] = bytes[bytes.length - 30]! ^ 0x04;
    writeFileSync(file, bytes);
    const r = await run('audit', '--store', `jsonl:${dir}`, 'c-1');
    expect(r.code).toBe(3);
    expectOneLine(r.stderr);
    expect(r.stderr).toContain(streamFileName('c-1').fileName);
    const j = await run('audit', file, '--json');
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'store-corrupt' } });
    expect(readFileSync(file)).toEqual(bytes);
  });

  it('store check reports damage (exit 1), store repair --rebuild-index restores a truncated index', async () => {
    const dir = await demoStore();
    expect((await run('store', 'check', `jsonl:${dir}`)).stdout).toMatch(/40 committed events in 1 stream file, ok/);
    truncateSync(join(dir, 'global.idx'), 9 * 80 + 17);
    const check = await run('store', 'check', `jsonl:${dir}`, '--json');
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout).problems.length).toBeGreaterThan(0);
    expect((await run('audit', '--store', `jsonl:${dir}`, 'c-1')).code).toBe(3);
    const repair = await run('store', 'repair', `jsonl:${dir}`, '--rebuild-index');
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toMatch(/40 events from 1 stream files; the previous index is in quarantine\//);
    expect((await run('store', 'check', `jsonl:${dir}`)).code).toBe(0);
    expect(JSON.parse((await run('audit', '--store', `jsonl:${dir}`, 'c-1', '--json')).stdout)).toMatchObject({ ok: true, events: 40 });
    // repair without --rebuild-index runs crash recovery: a torn tail goes to the quarantine
    const file = join(dir, 'streams', streamFileName('c-1').fileName);
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('{"c":"0000')]));
    expect((await run('store', 'check', `jsonl:${dir}`, '--json')).code).toBe(0);
    const recovered = await run('store', 'repair', `jsonl:${dir}`);
    expect(recovered.code).toBe(0);
    expect(recovered.stdout).toMatch(/1 unfinished-commit piece moved to quarantine\//);
    expect(JSON.parse((await run('store', 'check', `jsonl:${dir}`, '--json')).stdout)).toMatchObject({ ok: true, notes: [] });
    expect((await run('store', 'check', 'memory:')).code).toBe(2);
  });
});

describe('reading never writes: PostgreSQL', () => {
  it('a role without DDL rights can audit; a missing schema is a clear exit 3', async () => {
    const schema = uniqueSchema('ro');
    const role = `stl_ro_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      expect((await run('demo', '--store', `${PG_URL}?schema=${schema}`, '--session', 'ro-1', '--json')).code).toBe(0);
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      await admin.query(`REVOKE CREATE ON SCHEMA public FROM ${role}`).catch(() => undefined);
      const url = new URL(PG_URL);
      url.username = role;
      const r = await run('audit', '--store', `${url.toString()}?schema=${schema}`, 'ro-1', '--json');
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, events: 40 });
      const missing = await run('audit', '--store', `${url.toString()}?schema=${schema}_none`, 'ro-1');
      expect(missing.code).toBe(3);
      expectOneLine(missing.stderr);
      expect(missing.stderr).toMatch(/holds no steerlog store/);
    } finally {
      await admin.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${role}`).catch(() => undefined);
      await admin.query(`REVOKE ALL ON SCHEMA ${schema} FROM ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
      await dropSchema(schema);
    }
  });
});
