import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as run } from './support/run-cli.js';
import { openJsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { asNewEvents, chainedSession } from '../../support/chained-session.js';
import { LogBuilder, msg } from '../../support/log-builder.js';

const dir = mkdtempSync(join(tmpdir(), 'steerlog-sessions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('steerlog sessions', () => {
  it('lists every session with created time, events, turns, status at the end of its log and chain status', async () => {
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const chained = await chainedSession('chained-1');
    await store.append('chained-1', asNewEvents(chained), 'no_stream');
    const open = new LogBuilder('open-1');
    open.followup(msg('A')).turnStart();
    open.claim();
    await store.append('open-1', open.events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
    const pending = new LogBuilder('pending-1');
    pending.followup(msg('B'));
    await store.append('pending-1', pending.events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
    await store.close();

    const r = await run('sessions', '--store', `jsonl:${dir}`, '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.format).toBe('steerlog-sessions');
    expect(out.sessions).toEqual([
      // the context the look tool staged is the tool's (tool:look, plugin): every action of the runtime-written session names its actor
      { session: 'chained-1', createdAt: (chained[0]!.data as { createdAt: number }).createdAt, events: chained.length, lastSeq: chained.length - 1, lastTime: chained.at(-1)!.time, turns: 2, status: 'idle', invalidAt: null, chain: 'verified', createdBy: 'user:ana', actors: ['user:ana', 'tool:look', 'service:bot'], unattributed: 0 },
      { session: 'open-1', createdAt: 1_700_000_000_000, events: 4, lastSeq: 3, lastTime: 1_700_000_000_003, turns: 1, status: 'open-turn', invalidAt: null, chain: 'unchained', createdBy: null, actors: [], unattributed: 2 },
      { session: 'pending-1', createdAt: 1_700_000_000_000, events: 2, lastSeq: 1, lastTime: 1_700_000_000_001, turns: 0, status: 'pending-work', invalidAt: null, chain: 'unchained', createdBy: null, actors: [], unattributed: 2 },
    ]);
    const text = await run('sessions', '--store', `jsonl:${dir}`);
    expect(text.stdout.split('\n')[1]).toBe(`chained-1  ${new Date((chained[0]!.data as { createdAt: number }).createdAt).toISOString()}  ${chained.length}  2  idle  verified  user:ana,tool:look,service:bot`);
    // a session whose log names no actor says how many of its actions name nobody
    expect(text.stdout.split('\n')[2]).toMatch(/^open-1 .* \(2 with no actor recorded\)$/);
    expect((await run('sessions', 'extra')).code).toBe(2);
  });

  it("--limit, --after and --kind list a page from the store's session catalog, with the next page's cursor", async () => {
    const all = JSON.parse((await run('sessions', '--store', `jsonl:${dir}`, '--json')).stdout) as { sessions: { session: string }[] };
    const first = await run('sessions', '--store', `jsonl:${dir}`, '--json', '--limit', '2');
    expect(first.code).toBe(0);
    const page1 = JSON.parse(first.stdout) as { sessions: { session: string }[]; next: string | null };
    expect(page1.sessions).toHaveLength(2);
    expect(page1.next).not.toBeNull();
    const page2 = JSON.parse((await run('sessions', '--store', `jsonl:${dir}`, '--json', '--limit', '2', '--after', page1.next!)).stdout) as { sessions: { session: string }[]; next: string | null };
    expect(page2.next).toBeNull();
    // the catalog's order (createdAt, then id) holds the same sessions as the full list
    expect([...page1.sessions, ...page2.sessions].map((s) => s.session).sort()).toEqual(all.sessions.map((s) => s.session).sort());
    expect(JSON.parse((await run('sessions', '--store', `jsonl:${dir}`, '--json', '--kind', 'no-such-kind')).stdout).sessions).toEqual([]);
    expect((await run('sessions', '--store', `jsonl:${dir}`, '--limit', '0')).code).toBe(2);
  });

  it('--newest lists the catalog newest first (the oldest-first order reversed), its cursor resuming newest first', async () => {
    const ids = async (...args: string[]): Promise<{ ids: string[]; next: string | null }> => {
      const out = JSON.parse((await run('sessions', '--store', `jsonl:${dir}`, '--json', ...args)).stdout) as { sessions: { session: string }[]; next: string | null };
      return { ids: out.sessions.map((s) => s.session), next: out.next };
    };
    const oldest = (await ids('--limit', '100')).ids;
    expect(oldest).toHaveLength(3);
    expect((await ids('--newest')).ids).toEqual([...oldest].reverse());
    const page1 = await ids('--newest', '--limit', '2');
    expect(page1.ids).toEqual([oldest[2], oldest[1]]);
    const page2 = await ids('--newest', '--limit', '2', '--after', page1.next!);
    expect(page2).toEqual({ ids: [oldest[0]], next: null });
    const text = await run('sessions', '--store', `jsonl:${dir}`, '--newest', '--limit', '2');
    expect(text.stdout.trim().split('\n').at(-1)).toBe(`next page: --newest --after ${page1.next}`);
  });
});
