import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../adapters/store/open-store.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { runCli } from '../cli/support/run-cli.js';
import { startTestHost, type TestHost } from './http-support.js';

// The console's sessions list finds sessions with `steerlog search --json` and `steerlog lineage --json`.

let host: TestHost | null = null;
let store: EventStore | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await host?.close();
  host = null;
  await store?.close();
  store = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('GET /api/search and GET /api/lineage/<id>', () => {
  it('answer exactly what `steerlog search --json` and `steerlog lineage --json` print over the same store', async () => {
    process.env['STEERLOG_ECHO_DELAY_MS'] = '0';
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-finding-'));
    dirs.push(dir);
    const spec = `jsonl:${dir}`;
    try {
      expect((await runCli('demo', '--store', spec, '--session', 'find-a')).code).toBe(0);
      expect((await runCli('demo', '--store', spec, '--session', 'find-b')).code).toBe(0);
      expect((await runCli('replay', '--store', spec, 'find-a', '--from', '1.2', '--model', 'echo', '--recorded-tools', '--session', 'find-a-echo')).code).toBe(0);
    } finally {
      delete process.env['STEERLOG_ECHO_DELAY_MS'];
    }
    store = await openStore(spec);
    host = await startTestHost({ store });
    const searches: [Record<string, string>, string[]][] = [
      [{ text: 'follow-up' }, []],
      [{ text: 'the', limit: '2' }, ['--limit', '2']],
      [{ text: 'echo', session: 'find-a-echo' }, ['--session', 'find-a-echo']],
      [{ text: 'a', type: 'tool/call,tool/result' }, ['--type', 'tool/call,tool/result']],
      [{ text: 'a', since: '2000-01-01T00:00:00Z', until: String(Date.now() + 60_000) }, ['--since', '2000-01-01T00:00:00Z', '--until', String(Date.now() + 60_000)]],
      [{ text: 'nothing-like-this' }, []],
    ];
    let hits = 0;
    for (const [params, flags] of searches) {
      const res = await fetch(`${host.url}/api/search?${new URLSearchParams(params).toString()}`);
      expect(res.status, params.text).toBe(200);
      const cli = await runCli('search', ...params.text!.split(' '), '--store', spec, ...flags, '--json');
      expect(cli.code).toBe(0);
      const answer = (await res.json()) as { total: number };
      expect(answer, JSON.stringify(params)).toEqual(JSON.parse(cli.stdout));
      hits += answer.total;
    }
    expect(hits).toBeGreaterThan(0);
    for (const session of ['find-a', 'find-a-echo', 'find-b']) {
      const res = await fetch(`${host.url}/api/lineage/${session}`);
      expect(res.status).toBe(200);
      const cli = await runCli('lineage', session, '--store', spec, '--json');
      expect(await res.json()).toEqual(JSON.parse(cli.stdout));
    }
    const lineage = (await (await fetch(`${host.url}/api/lineage/find-a-echo`)).json()) as { root: { session: string; children: { session: string }[] } };
    expect(lineage.root).toMatchObject({ session: 'find-a', children: [{ session: 'find-a-echo' }] });
    // refusals: what the commands refuse as usage, or as no such session
    expect([(await fetch(`${host.url}/api/search?text=%20`)).status, (await fetch(`${host.url}/api/search?text=a&limit=x`)).status, (await fetch(`${host.url}/api/search?text=a&since=later`)).status]).toEqual([400, 400, 400]);
    expect((await fetch(`${host.url}/api/lineage/nobody`)).status).toBe(404);
  });
});
