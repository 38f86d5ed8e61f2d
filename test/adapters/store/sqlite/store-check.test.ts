import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { connectSqlite } from '../../../../adapters/store/sqlite/driver.js';
import { openSqliteEventStore } from '../../../../adapters/store/sqlite/index.js';
import { runCli } from '../../cli/support/run-cli.js';
import { describeSqlite, sqliteFiles } from './sqlite-test-support.js';

/**
 * `steerlog store check sqlite:<file>`: clean on a store the runtime wrote; a chain broken by a raw UPDATE, a catalog
 * row made wrong, a streams row made wrong and bytes flipped in the file are each reported as damage (exit 1, the
 * JSONL check's report shape), and the checked file's bytes stay as they were.
 */
const freshFile = sqliteFiles();
const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** A closed store with two chained demo sessions and an unchained stream (its WAL checkpointed into the file). */
const seeded = async (): Promise<string> => {
  const file = freshFile();
  for (const s of ['demo-a', 'demo-b']) expect((await runCli('demo', '--store', `sqlite:${file}`, '--session', s)).code).toBe(0);
  const store = await openSqliteEventStore(file);
  await store.append('plain', [{ id: 'p0', type: 'turn/start', time: 5, data: { n: 1 } }, { id: 'p1', type: 'x', time: 6, data: {}, metadata: { m: 1 } }], 'no_stream');
  await store.close();
  return file;
};

/** Runs SQL on the file with a plain writable connection (what a hand edit or a bug would do). */
const tamper = (file: string, sql: string): void => {
  const db = connectSqlite(file, { readOnly: false, busyTimeoutMs: 1000 });
  db.exec(sql);
  db.close();
};

const check = async (file: string) => {
  const before = sha(file);
  const json = await runCli('store', 'check', `sqlite:${file}`, '--json');
  const human = await runCli('store', 'check', `sqlite:${file}`);
  expect(sha(file), 'store check wrote to the file').toBe(before);
  expect(human.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout), human: human.stdout, stderr: json.stderr + human.stderr };
};

describeSqlite('store check sqlite:<file>', () => {
  it('a store the runtime wrote checks clean, in the JSONL check report shape', async () => {
    const file = await seeded();
    const { code, report, human } = await check(file);
    expect(code).toBe(0);
    expect(report).toEqual({ ok: true, directory: file, events: 82, streams: 3, problems: [], notes: [] });
    expect(human).toBe(`store sqlite:${file}: 82 events in 3 streams, ok\n`);
  });

  it('an event changed by a raw UPDATE breaks its chain: exit 1, the stream and seq named', async () => {
    const file = await seeded();
    tamper(file, `UPDATE events SET data = json_set(data, '$.target', 'tampered') WHERE stream = 'demo-b' AND revision = 4`);
    const { code, report, human } = await check(file);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([{ file: 'stream "demo-b"', offset: 4, message: expect.stringMatching(/^the hash chain does not hold at seq 4: hash-mismatch/) }]);
    expect(human).toMatch(/DAMAGED \(1 problem\)\n {2}problem {2}stream "demo-b" seq 4: the hash chain does not hold at seq 4/);
  });

  it('a catalog row, a streams row and a dropped event that disagree with the log are each a problem', async () => {
    const file = await seeded();
    tamper(
      file,
      `UPDATE session_catalog SET last_seq = 3, open_turn = 1 WHERE stream = 'demo-a';
       DELETE FROM session_catalog WHERE stream = 'plain';
       UPDATE streams SET revision = 7 WHERE stream = 'demo-b';
       DELETE FROM events WHERE stream = 'plain' AND revision = 0;`,
    );
    const { code, report } = await check(file);
    expect(code).toBe(1);
    const messages = report.problems.map((p: { file: string; message: string }) => `${p.file}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^session_catalog: stream "demo-a": last_seq 3, the log says 39; open_turn 1, the log says 0$/),
        'session_catalog: stream "plain" has no catalog row',
        expect.stringMatching(/^streams: stream "demo-b": the streams table says revision 7, its events end at 39$/),
        expect.stringMatching(/^stream "plain": revision 1 follows -1: revisions are not dense from 0$/),
      ]),
    );
  });

  it('bytes flipped in a copy of the file: damage reported (exit 1), the copy left as it was', async () => {
    const file = await seeded();
    const copy = `${file}.copy.db`;
    copyFileSync(file, copy);
    const bytes = readFileSync(copy);
    // every b-tree page after the first: its page-type byte and cell-count, made impossible
    const pageSize = bytes.readUInt16BE(16);
    for (let page = 1; page * pageSize < bytes.length; page++) bytes.fill(0xa5, page * pageSize, page * pageSize + 8);
    writeFileSync(copy, bytes);
    const { code, report, human } = await check(copy);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ file: "integrity_check" });
    expect(human).toMatch(/DAMAGED/);
  });

  it('a missing file is a failure to read (exit 3, store-io), not a verdict; nothing is created', async () => {
    const file = freshFile();
    const r = await runCli('store', 'check', `sqlite:${file}`, '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
    expect(existsSync(file)).toBe(false);
  });
});
