import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HostFrame } from '../../host/schemas.js';
import { startTestHost, type TestHost } from '../../test/adapters/http/http-support.js';
import { hostClient, mirrorExample, promptExample } from './host-client.js';

let h: TestHost;
afterEach(async () => h?.close());

describe('docs/host.md snippets run', () => {
  it('the TypeScript client: create, an idempotent prompt, history; the mirror sees the queue', async () => {
    h = await startTestHost();
    h.model.releaseAll();
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const { receipt, retry, page } = await promptExample(h.url);
    expect(retry).toEqual({ ...receipt, durable: false, duplicate: true });
    expect(page.events[0]!.event.type).toBe('session/created');
    const call = hostClient(h.url);
    const { sessionId } = await call('session.create', {});
    const stop = new AbortController();
    const frames: HostFrame[] = [];
    const done = mirrorExample(h.url, sessionId, stop.signal, (f) => {
      frames.push(f);
      if (f.type === 'session/event' && f.event.type === 'turn/end') stop.abort();
    });
    while (!frames.some((f) => f.type === 'session/subscribed')) await new Promise((r) => setTimeout(r, 5));
    await call('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: 'hi' }] });
    await done;
    expect(frames.filter((f) => f.type === 'session/queue').length).toBeGreaterThan(0);
    await expect(call('session.prompt', { sessionId: 'nope', mode: 'queue', content: [] })).rejects.toMatchObject({ code: 'session-not-found' });
  });

  it('every curl block of docs/host.md runs against a host and gets the answer the doc shows', async () => {
    h = await startTestHost();
    h.model.releaseAll();
    const doc = readFileSync(new URL('../host.md', import.meta.url), 'utf8');
    const blocks = [...doc.matchAll(/<!-- curl -->\n```sh\n([\s\S]*?)```\n(?:\n?```json\n([\s\S]*?)```\n)?/g)];
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    for (const [, script, expected] of blocks) {
      // asynchronously: the host answering curl runs in this process
      const { stdout: out } = await promisify(execFile)('sh', ['-c', script!], { env: { ...process.env, URL: h.url }, encoding: 'utf8' });
      if (expected) expect(JSON.parse(out), script).toMatchObject(JSON.parse(expected));
    }
  });
});
