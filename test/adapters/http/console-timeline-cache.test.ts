import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleChain } from '../../../adapters/http/console-reads.js';
import { DERIVED_DIR, digestOfLines, jsonlDerivedCache } from '../../../adapters/store/jsonl/derived-cache-files.js';
import { openStore } from '../../../adapters/store/open-store.js';
import { sessionTimeline, type SessionTimeline } from '../../../audit/session-timeline.js';
import type { TimelineSummary } from '../../../audit/timeline-summary.js';
import { envelopeOfRecorded } from '../../../runtime/ports/recorded-envelope.js';
import type { LogEvent } from '../../../domain/events.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { asNewEvents, chainedSession } from '../../support/chained-session.js';
import { editStreamFile } from '../../support/edit-stream-file.js';
import { cliJson, getJson, startTestHost, type TestHost } from './http-support.js';

// The console keeps a stored session's timeline beside its stream (derived/), so the audit view of a long session
// opens after a restart without a read of the whole log; it is served only while its claim holds, and checked
// against the log's own derivation once the log is read.

const SESSION = 'cached-1';

let host: TestHost | null = null;
const stores: EventStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await host?.close();
  host = null;
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const closeHost = async () => {
  await host?.close();
  host = null;
  for (const s of stores.splice(0)) await s.close();
};
/** A console over the JSONL store in `dir` with its derived caches (what `serve` does): a fresh server, nothing held. */
const openConsole = async (dir: string) => {
  const store = await openStore(`jsonl:${dir}`);
  stores.push(store);
  host = await startTestHost({ store, http: { console: { derivedCache: jsonlDerivedCache(dir) } } });
  return host;
};
const storedEvents = async (dir: string): Promise<LogEvent[]> => {
  const store = await openStore(`jsonl:${dir}`);
  try {
    const out: LogEvent[] = [];
    for await (const r of store.read(SESSION)) out.push(envelopeOfRecorded(r) as LogEvent);
    return out;
  } finally {
    await store.close();
  }
};
/** The session's cache file, once it is written (after the answer that derived it). */
const cacheFile = async (dir: string): Promise<string> =>
  vi.waitFor(
    () => {
      const names = readdirSync(join(dir, DERIVED_DIR)).filter((n) => n.endsWith('.console-timeline'));
      expect(names).toHaveLength(1);
      return join(dir, DERIVED_DIR, names[0]!);
    },
    { timeout: 5000, interval: 20 },
  );
/** A store holding the chained session of test/support, written as the runtime wrote it. */
const writeSession = async (): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-cache-'));
  dirs.push(dir);
  const store = await openStore(`jsonl:${dir}`);
  await store.append(SESSION, asNewEvents(await chainedSession(SESSION)), 'no_stream');
  await store.close();
  return dir;
};

describe('the console timeline cache', () => {
  it('is written on the first read, served after a restart, and confirmed against the log', async () => {
    const dir = await writeSession();
    const expected = sessionTimeline(SESSION, await storedEvents(dir));
    await openConsole(dir);
    expect(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`)).toEqual(expected);
    expect((await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`)).timeline).toBe('log');
    await closeHost();
    // the header names the events it came from; the timeline follows
    const [header, body] = readFileSync(await cacheFile(dir), 'utf8').split('\n');
    const events = await storedEvents(dir);
    expect(JSON.parse(header!)).toMatchObject({ version: 1, sessionId: SESSION, events: events.length, last: { id: events.at(-1)!.id, hash: events.at(-1)!.hash } });
    expect(JSON.parse(body!)).toEqual(expected);

    await openConsole(dir);
    expect(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`)).toEqual(expected);
    expect((await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`)).timeline).toBe('confirmed');
    // the summary and the export are the log's (the export reads the log itself)
    expect((await getJson<TimelineSummary>(host!, `/api/timeline-summary/${SESSION}`)).totals.turns).toBe(expected.turns.length);
    const exported = await getJson<unknown>(host!, `/api/export/${SESSION}`);
    await closeHost();
    expect(exported).toEqual(await cliJson('audit', '--store', `jsonl:${dir}`, SESSION, '--json'));
  });

  it('an edited cache file is served until the log is read, then replaced, and the chain answer says so', async () => {
    const dir = await writeSession();
    await openConsole(dir);
    const expected = await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`);
    await closeHost();
    // a forger rewrites the timeline and keeps the header (its claim and digest still hold)
    const file = await cacheFile(dir);
    const [header, body] = readFileSync(file, 'utf8').split('\n');
    const forged = body!.replace('find it', 'lost it');
    expect(forged).not.toBe(body);
    writeFileSync(file, `${header}\n${forged}`);

    await openConsole(dir);
    // what a cache says is served at once (the claim holds); the chain answer waits for the log's derivation
    expect(JSON.stringify(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`))).toContain('lost it');
    const chain = await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`);
    expect(chain.timeline).toBe('replaced');
    expect(chain.verification.status).toBe('verified');
    expect(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`)).toEqual(expected);
    await closeHost();
    // the cache is written again from the log
    await vi.waitFor(() => expect(readFileSync(file, 'utf8').split('\n')[1]).toBe(body), { timeout: 5000, interval: 20 });
  });

  it('is not served once the store file was edited: the timeline is the edited log, the chain broken at the edit', async () => {
    const dir = await writeSession();
    await openConsole(dir);
    const before = await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`);
    await closeHost();
    const seq = await editStreamFile(dir, SESSION, 'and then?', 'and THEN?', 'agent/inbox/spliced');
    await editStreamFile(dir, SESSION, 'and then?', 'and THEN?', 'user/message');

    await openConsole(dir);
    const timeline = await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`);
    const chain = await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`);
    await closeHost();
    expect(chain.timeline).toBe('log');
    expect(chain.verification).toMatchObject({ status: 'broken', break: { seq } });
    expect(timeline).not.toEqual(before);
    expect(JSON.stringify(timeline)).toContain('and THEN?');
    expect(timeline).toEqual(sessionTimeline(SESSION, await storedEvents(dir)));
    expect(chain.verification).toEqual(((await cliJson('verify', '--store', `jsonl:${dir}`, SESSION, '--json')).sessions as unknown[])[0]);
  });

  it('is not served once the log has grown, nor when its version is another', async () => {
    const dir = await writeSession();
    await openConsole(dir);
    await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`);
    await closeHost();
    const file = await cacheFile(dir);
    const [header, body] = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, `${header!.replace('"version":1', '"version":999')}\n${body!.replace('find it', 'lost it')}`);
    await openConsole(dir);
    expect(JSON.stringify(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`))).not.toContain('lost it');
    expect((await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`)).timeline).toBe('log');
    await closeHost();

    writeFileSync(file, `${readFileSync(file, 'utf8').split('\n')[0]}\n${body!.replace('find it', 'lost it')}`);
    const store = await openStore(`jsonl:${dir}`);
    const n = (await storedEvents(dir)).length;
    await store.append(SESSION, [{ id: 'late-1', type: 'session/note', time: 1_800_000_000_000, data: { text: 'later' } }], BigInt(n - 1));
    await store.close();
    await openConsole(dir);
    expect(JSON.stringify(await getJson<SessionTimeline>(host!, `/api/timeline/${SESSION}`))).not.toContain('lost it');
    expect((await getJson<ConsoleChain>(host!, `/api/chain/${SESSION}`)).timeline).toBe('log');
  });

  it('the stored digest covers the header and the first events lines, and any byte of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-digest-'));
    dirs.push(dir);
    const path = join(dir, 'f');
    const lines = ['{"h":1}', '{"e":0}', '{"e":1}', '{"e":2'];
    writeFileSync(path, `${lines.join('\n')}`);
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(await digestOfLines(path, 0)).toBe(sha(''));
    expect(await digestOfLines(path, 2)).toBe(sha('{"h":1}\n{"e":0}\n'));
    expect(await digestOfLines(path, 3)).toBe(sha('{"h":1}\n{"e":0}\n{"e":1}\n'));
    expect(await digestOfLines(path, 4)).toBeNull(); // the last line is not complete
    expect(await digestOfLines(join(dir, 'missing'), 1)).toBeNull();
  });
});
