import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamFileName } from '../../../adapters/store/jsonl/index.js';
import { AuditOutputSchema, SessionsOutputSchema, VerifyOutputSchema, WhyOutputSchema } from '../../../adapters/cli/output-schemas.js';
import { runCli } from './support/run-cli.js';
import { letAuditorReach, runAsAuditor } from './support/run-as-auditor.js';
import { seedStore } from '../store/jsonl/support/damage.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';

/**
 * Issue 27: reading never writes. Every reading command (audit, verify, why, sessions, export, project) opens a store
 * the same read-only way: on JSONL no file, directory, lock or quarantine is created and no byte changes — with a
 * torn tail (an unfinished commit, which recovery would cut), a pending group journal (which recovery would replay),
 * and on a read-only copy read by a user without write rights. What such a store leaves unread is reported: on stderr,
 * or with `--json` in the printed object's `storeNotes` (`[]` when nothing is left); on PostgreSQL a role with SELECT rights only can run
 * them all, and a schema that does not exist is not created.
 */
const SESSION = 'ro-1';
const MODULE = 'docs/projections/accept-to-claim.ts';
let root: string;
let messageId: string;

/** Every entry under `dir` (directories too) with the md5 of each file: what "nothing changed" compares. */
const md5Tree = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        out[`${relative(dir, p)}/`] = 'dir';
        walk(p);
      } else out[relative(dir, p)] = createHash('md5').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
};

/** Every reading command over the store `spec` names (session `SESSION`, or `session`). */
const readingCommands = (spec: string, session = SESSION): string[][] => [
  ['audit', '--store', spec, session],
  ['audit', '--store', spec, session, '--json'],
  ['verify', '--store', spec, session],
  ['verify', '--store', spec, '--all', '--json'],
  ['why', '--store', spec, session, messageId],
  ['why', '--store', spec, session, messageId, '--json'],
  ['sessions', '--store', spec],
  ['sessions', '--store', spec, '--json'],
  ['export', spec, session],
  ['project', MODULE, '--store', spec],
];

const OUTPUT_SCHEMAS = { audit: AuditOutputSchema, verify: VerifyOutputSchema, why: WhyOutputSchema, sessions: SessionsOutputSchema };

/**
 * The `storeNotes` of the one JSON object a `--json` run of `command` printed (stdout is that object and nothing
 * else), checked against the command's published output schema first.
 */
const storeNotesOf = (command: string, stdout: string): unknown => {
  const value = JSON.parse(stdout) as { storeNotes?: unknown };
  OUTPUT_SCHEMAS[command as keyof typeof OUTPUT_SCHEMAS].parse(value);
  return value.storeNotes;
};

const demo = async (dir: string): Promise<void> => {
  expect((await runCli('demo', '--store', `jsonl:${dir}`, '--session', SESSION, '--json')).code).toBe(0);
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'steerlog-ro-'));
  const dir = join(root, 'first');
  await demo(dir);
  const exported = (await runCli('export', `jsonl:${dir}`, SESSION)).stdout.trimEnd().split('\n');
  messageId = (JSON.parse(exported.find((l) => l.includes('"agent/inbox/spliced"'))!) as { data: { inserted: { id: string }[] } }).data.inserted[0]!.id;
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('reading never writes: JSONL', () => {
  it('every reading command leaves every byte of a store with a pending group journal where it was', async () => {
    const dir = join(root, 'journal');
    await demo(dir);
    expect(statSync(join(dir, 'group.journal')).size).toBeGreaterThan(0); // the demo's commits are still journaled
    const before = md5Tree(dir);
    for (const argv of readingCommands(`jsonl:${dir}`)) {
      const r = await runCli(...argv);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(md5Tree(dir), argv.join(' ')).toEqual(before);
      // a store that leaves nothing unread: --json says so with an empty list, not by leaving the field out
      if (argv.includes('--json')) expect(storeNotesOf(argv[0]!, r.stdout), argv.join(' ')).toEqual([]);
    }
  });

  it('a torn tail (an unfinished commit) is reported and read around, never cut into the quarantine', async () => {
    const dir = join(root, 'torn');
    await demo(dir);
    const file = join(dir, 'streams', streamFileName(SESSION).fileName);
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('{"c":"0000')]));
    const before = md5Tree(dir);
    for (const argv of [...readingCommands(`jsonl:${dir}`), ['audit', file], ['store', 'check', `jsonl:${dir}`]]) {
      const r = await runCli(...argv);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(md5Tree(dir), argv.join(' ')).toEqual(before);
      const note = `streams/${streamFileName(SESSION).fileName}: 10 bytes after its last committed line (an unfinished commit), not read`;
      if (argv.includes('--store') && !argv.includes('--json')) expect(r.stderr, argv.join(' ')).toBe(`steerlog ${argv[0]}: note: ${note}\n`);
      if (argv.includes('--json')) {
        // --json: stdout holds the one object, stderr stays empty, and the object carries the note
        expect(r.stderr, argv.join(' ')).toBe('');
        expect(storeNotesOf(argv[0]!, r.stdout), argv.join(' ')).toEqual([note]);
      }
    }
    expect(existsSync(join(dir, 'quarantine'))).toBe(false);
    // what a writable open does instead: it cuts the tail into the quarantine
    expect((await runCli('store', 'repair', `jsonl:${dir}`)).code).toBe(0);
    expect(existsSync(join(dir, 'quarantine'))).toBe(true);
  });

  it('a journal holding a commit the index lacks (as after a power loss) is reported, not replayed', async () => {
    const seeded = await seedStore(root, { journalPending: true });
    // the index loses the last (group) commit's 3 records: only the journal still holds it
    const index = join(seeded.dir, 'global.idx');
    truncateSync(index, statSync(index).size - 3 * 80);
    const before = md5Tree(seeded.dir);
    const note = 'group.journal: 1 commit the index does not hold (a power loss?), not read: a writable open (steerlog store repair) replays them';
    for (const argv of readingCommands(`jsonl:${seeded.dir}`, 's/a')) {
      const r = await runCli(...argv);
      // its events are no steerlog session log; why finds no such id in it (exit 2) and says so all the same
      expect(argv[0] === 'why' ? [0, 1, 2] : [0, 1], `${argv.join(' ')}: ${r.stderr}`).toContain(r.code);
      expect(md5Tree(seeded.dir), argv.join(' ')).toEqual(before);
      if (!argv.includes('--json')) expect(r.stderr, argv.join(' ')).toContain(`steerlog ${argv[0]}: note: ${note}\n`);
      else {
        expect(r.stderr, argv.join(' ')).toBe('');
        // (the stream files' bytes of that commit are an unfinished commit to a reader, and are noted too)
        expect(storeNotesOf(argv[0]!, r.stdout), argv.join(' ')).toContain(note);
      }
    }
    // a writable open replays it: the 3 events are back
    expect((await runCli('store', 'repair', `jsonl:${seeded.dir}`)).code).toBe(0);
    expect((await runCli('export', `jsonl:${seeded.dir}`, 's/a')).stdout.trimEnd().split('\n')).toHaveLength(4);
  });

  it('a directory that holds no store is exit 3 for every reading command, and nothing is created', async () => {
    const missing = join(root, 'typo');
    for (const argv of readingCommands(`jsonl:${missing}`)) {
      const r = await runCli(...argv);
      expect(r.code, argv.join(' ')).toBe(3);
      expect(existsSync(missing), argv.join(' ')).toBe(false);
    }
    const empty = mkdtempSync(join(root, 'empty-'));
    for (const argv of readingCommands(`jsonl:${empty}`)) expect((await runCli(...argv)).code, argv.join(' ')).toBe(3);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('an auditor without write rights runs every reading command on a chmod -R a-w copy', async () => {
    const source = join(root, 'source');
    await demo(source);
    const copy = join(root, 'read-only-copy');
    cpSync(source, copy, { recursive: true });
    const chmodTree = (p: string, strip: boolean): void => {
      const st = statSync(p);
      chmodSync(p, strip ? st.mode & 0o555 : st.mode | 0o200);
      if (st.isDirectory()) for (const name of readdirSync(p)) chmodTree(join(p, name), strip);
    };
    chmodTree(copy, true);
    letAuditorReach(join(copy, 'x'));
    const before = md5Tree(copy);
    try {
      const cells = [...readingCommands(`jsonl:${copy}`), ['audit', join(copy, 'streams', streamFileName(SESSION).fileName)], ['store', 'check', `jsonl:${copy}`]];
      const runs = await runAsAuditor(cells);
      for (const [i, r] of runs.entries()) expect(r.code, `${cells[i]!.join(' ')}: ${r.stderr}`).toBe(0);
      expect(md5Tree(copy)).toEqual(before);
    } finally {
      chmodTree(copy, false);
    }
  });
});

describePg('reading never writes: PostgreSQL', () => {
  it('a role with USAGE and SELECT only runs every reading command; a schema that does not exist is exit 3 and stays absent', async () => {
    const schema = uniqueSchema('ro27');
    const role = `stl_ro27_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      expect((await runCli('demo', '--store', `${PG_URL}?schema=${schema}`, '--session', SESSION, '--json')).code).toBe(0);
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      await admin.query(`REVOKE CREATE ON SCHEMA public FROM ${role}`).catch(() => undefined);
      const url = new URL(PG_URL);
      url.username = role;
      const spec = `${url.toString()}?schema=${schema}`;
      for (const argv of readingCommands(spec)) {
        const r = await runCli(...argv);
        expect(r.code, `${argv.join(' ')}: ${r.stderr}${r.stdout.slice(0, 200)}`).toBe(0);
      }
      const absent = `${schema}_none`;
      for (const argv of readingCommands(`${PG_URL}?schema=${absent}`)) {
        const r = await runCli(...argv);
        expect(r.code, `${argv.join(' ')}: ${r.stdout}`).toBe(3);
        if (!argv.includes('--json')) expect(r.stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
      }
      const found = await admin.query('SELECT nspname FROM pg_namespace WHERE nspname = $1', [absent]);
      expect(found.rowCount).toBe(0);
    } finally {
      await admin.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${role}`).catch(() => undefined);
      await admin.query(`REVOKE ALL ON SCHEMA ${schema} FROM ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
      await dropSchema(schema);
    }
  });
});
