import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { openJsonlEventStore } from '../../adapters/store/jsonl/index.js';
import { createUserMessage } from '../../domain/message.js';
import { checkedEvent, checkedForm } from '../../runtime/ports/checked-events.js';
import type { EventStore, NewEvent } from '../../runtime/ports/event-store.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { eventSizeBytes } from '../../runtime/ports/store-validation.js';
import { silentLogger } from '../../runtime/logger.js';
import { SessionLog } from '../../runtime/session-log.js';

/**
 * The session log marks the events it built and checked (runtime/ports/checked-events.ts) so a store skips its
 * lossless-JSON walk, its size measurement and its defensive copy of them; every other event is still checked in
 * full at the store's boundary, and the session log still refuses malformed data with its typed code.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const stores: [string, () => Promise<EventStore>][] = [
  ['memory', async () => new MemoryEventStore({ maxEventBytes: 4096 })],
  [
    'JSONL',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-checked-'));
      dirs.push(dir);
      return openJsonlEventStore(join(dir, 's'), { maxEventBytes: 4096 });
    },
  ],
];
const uuid = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const lookAlike = (data: unknown, n = 1): NewEvent => Object.freeze({ id: uuid(n), type: 'turn/start', time: 1, data: Object.freeze(data), hash: 'a'.repeat(64) });

describe.each(stores)('the %s store at its boundary', (_name, open) => {
  it('gets every event of a session log marked, with its size and its serialized data', async () => {
    const store = await open();
    const seen: NewEvent[] = [];
    const append = store.append.bind(store);
    Object.assign(store, { append: (s: string, events: readonly NewEvent[], e: never) => (seen.push(...events), append(s, events, e)) });
    const log = new SessionLog({ store, stream: 's-1', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger });
    log.append('turn/start', { turn: 1 });
    log.append('user/message', createUserMessage('hé ✓'), { metadata: { causationId: 'c' } });
    await log.checkpoint();
    expect(seen.map((e) => e.type)).toEqual(['turn/start', 'user/message']);
    for (const e of seen) expect(checkedForm(e)).toEqual({ size: eventSizeBytes(e), dataJson: JSON.stringify(e.data) });
    const read = [];
    for await (const r of store.read('s-1')) read.push(r);
    expect(read.map((r) => r.data)).toEqual(log.events.map((e) => e.data));
    await store.close();
  });

  it('checks in full a frozen event that was not marked: data that is not lossless JSON is refused invalid-event', async () => {
    const store = await open();
    await expect(store.append('s-2', [lookAlike({ turn: Number.NaN })], 'any')).rejects.toMatchObject({ code: 'invalid-event', index: 0 });
    await expect(store.append('s-2', [{ ...lookAlike({ turn: 1 }), hash: 'not-a-hash' }], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    expect(await store.revision('s-2')).toBe('no_stream');
    await store.close();
  });

  it('an event whose data is not frozen is never marked, and a look-alike object is checked in full', async () => {
    const store = await open();
    const unfrozenData = checkedEvent({ id: uuid(3), type: 'turn/start', time: 1, data: { turn: Number.NaN } }, { size: 10, dataJson: '{"turn":1}' });
    expect(checkedForm(unfrozenData)).toBeUndefined();
    const unfrozenMeta = checkedEvent({ id: uuid(4), type: 'turn/start', time: 1, data: Object.freeze({ turn: 1 }), metadata: { a: Number.NaN } }, { size: 10, dataJson: '{"turn":1}' });
    expect(checkedForm(unfrozenMeta)).toBeUndefined();
    const marked = checkedEvent(lookAlike({ turn: 1 }, 8), { size: 10, dataJson: '{"turn":1}' });
    const copied = Object.freeze({ ...marked, data: Object.freeze({ turn: Number.NaN }) });
    expect(checkedForm(copied)).toBeUndefined();
    await expect(store.append('s-3', [unfrozenData], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    await expect(store.append('s-3', [unfrozenMeta], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    await expect(store.append('s-3', [copied], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    await store.close();
  });

  it('still checks a marked event against its own limit, its id and its time', async () => {
    const store = await open();
    const big = checkedEvent(lookAlike({ turn: 1 }, 5), { size: 5000, dataJson: '{"turn":1}' });
    await expect(store.append('s-4', [big], 'any')).rejects.toMatchObject({ code: 'event-too-large', bytes: 5000, limit: 4096 });
    const noId = checkedEvent(Object.freeze({ ...lookAlike({ turn: 1 }), id: '' }), { size: 30, dataJson: '{"turn":1}' });
    await expect(store.append('s-4', [noId], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    const badTime = checkedEvent(Object.freeze({ ...lookAlike({ turn: 1 }, 6), time: Number.NaN }), { size: 30, dataJson: '{"turn":1}' });
    await expect(store.append('s-4', [badTime], 'any')).rejects.toMatchObject({ code: 'invalid-event' });
    const twice = checkedEvent(lookAlike({ turn: 1 }, 7), { size: 30, dataJson: '{"turn":1}' });
    await expect(store.append('s-4', [twice, twice], 'any')).rejects.toMatchObject({ code: 'duplicate-event-id' });
    expect(await store.revision('s-4')).toBe('no_stream');
    await store.close();
  });
});

describe('the session log, which validates the data once, by hand for the common shapes', () => {
  const log = () => new SessionLog({ store: new MemoryEventStore(), stream: 's', clock: steppingClock(), ids: sequentialIds(), logger: silentLogger });
  it.each([
    ['turn/start', { turn: 0 }, 'data.turn'],
    ['step/end', { turn: 1, step: 1, extra: true }, 'data'],
    ['tool/call', { turn: 1, step: 1, callId: '', name: 'noop', arguments: '{}' }, 'data.callId'],
    ['tool/result', { turn: 1, step: 1, message: { role: 'tool', callId: 'c', content: [{ type: 'text', text: 5 }] } }, 'data.message.content.0'],
    ['assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', callId: 'c', name: 'n' }] } }, 'data.message.content.0'],
    ['assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [] }, interrupted: false }, 'data.interrupted'],
  ] as const)('refuses malformed %s data with invalid-event, naming where (%j)', (type, data, path) => {
    const l = log();
    expect(() => l.append(type, data as never)).toThrow(expect.objectContaining({ code: 'invalid-event', message: expect.stringContaining(path) }));
    expect(l.events).toEqual([]);
  });
  it('refuses malformed metadata with invalid-event', () => {
    const l = log();
    expect(() => l.append('turn/start', { turn: 1 }, { metadata: { causationId: '' } })).toThrow(expect.objectContaining({ code: 'invalid-event', message: expect.stringContaining('metadata.causationId') }));
    expect(l.events).toEqual([]);
  });
});
