import { connect } from 'node:net';
import { firstValueFrom, from, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { queueView } from '../../../projections/session/queue-view.js';
import type { LogEvent } from '../../../domain/events.js';
import type { HostFrame } from '../../../host/schemas.js';
import type { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { openMirror, startTestHost, valueOf, type TestHost } from './http-support.js';

let h: TestHost;
afterEach(async () => h?.close());
const text = (t: string) => [{ type: 'text' as const, text: t }];
const q = (f: HostFrame) => (f.type === 'session/queue' ? f.items.map((i) => `${i.id}:${i.placement}${i.claimed ? '*' : ''}`).join(',') : '');
const stored = async (store: MemoryEventStore, id: string): Promise<LogEvent[]> => {
  const out: LogEvent[] = [];
  for await (const r of store.read(id)) out.push({ seq: Number(r.revision), id: r.id, time: r.time, type: r.type, data: r.data } as LogEvent);
  return out;
};
/** Frames as a compact trace: Q[...] for queue frames, the event type for events, status changes. */
const trace = (frames: readonly HostFrame[]) =>
  frames.map((f) =>
    f.type === 'session/queue' ? `Q[${q(f)}]` : f.type === 'session/event' ? f.event.type : f.type === 'host/session-status' ? `running:${f.running}` : f.type,
  );

describe('the live mirror (GET /api/stream)', () => {
  it('scenario 1 over SSE: subscribed, Q[A:queued], running, turn/start, claim, Q[] — and the host frames equal the queueView projection of the stored log', async () => {
    h = await startTestHost();
    await h.rpc('session.create', { sessionId: 's' });
    const mirror = await openMirror(h.url, '?sessions=s');
    await mirror.waitFor((f) => f.type === 'session/subscribed');
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'A' }));
    await h.model.started(1);
    valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'steer', content: text('C'), messageId: 'C' }));
    h.model.releaseAll();
    await mirror.waitFor((f) => f.type === 'session/event' && f.event.type === 'turn/end');
    mirror.close();
    expect(mirror.frames[0]).toEqual({ type: 'session/subscribed', sessionId: 's', lastSeq: 0 });
    expect(trace(mirror.frames).slice(0, 8)).toEqual([
      'session/subscribed',
      'running:false',
      'agent/inbox/spliced',
      'Q[A:queued]',
      'running:true',
      'turn/start',
      'agent/inbox/spliced',
      'Q[]',
    ]);
    // the gapless handoff: the claimed steering row C stays (claimed) until its user/message
    const queueTrace = mirror.frames.filter((f) => f.type === 'session/queue').map(q);
    expect(queueTrace).toEqual(['A:queued', '', 'C:steering', 'C:steering*', '']);
    // two independent derivations: the host's live frames, the projection folded over the stored log
    await h.host.live.get('s')!.agent.checkpoint();
    const snapshots = await firstValueFrom(from(await stored(h.store as MemoryEventStore, 's')).pipe(queueView(), toArray()));
    const hostFrames = mirror.frames.filter((f): f is Extract<HostFrame, { type: 'session/queue' }> => f.type === 'session/queue');
    expect(hostFrames.map((f) => ({ seq: f.seq, items: f.items.map((i) => ({ id: i.id, placement: i.placement, claimed: i.claimed ?? false })) }))).toEqual(
      snapshots.map((s) => ({ seq: s.seq, items: s.items.map((i) => ({ id: i.id, placement: i.placement, claimed: i.claimed ?? false })) })),
    );
  });

  it('reference frames: the claim drops the steering row at once, and each splice’s queue frame precedes its event', async () => {
    h = await startTestHost({ host: { referenceFrames: true } });
    await h.rpc('session.create', { sessionId: 's' });
    const mirror = await openMirror(h.url, '?sessions=s');
    await mirror.waitFor((f) => f.type === 'session/subscribed');
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'A' });
    await h.model.started(1);
    await h.rpc('session.prompt', { sessionId: 's', mode: 'steer', content: text('C'), messageId: 'C' });
    h.model.releaseAll();
    await mirror.waitFor((f) => f.type === 'session/event' && f.event.type === 'turn/end');
    mirror.close();
    expect(trace(mirror.frames).slice(2, 8)).toEqual(['Q[A:queued]', 'agent/inbox/spliced', 'running:true', 'turn/start', 'Q[]', 'agent/inbox/spliced']);
    expect(mirror.frames.filter((f) => f.type === 'session/queue').map(q)).toEqual(['A:queued', '', 'C:steering', '']);
  });

  it('sends a baseline queue for a live session with pending work, announces new sessions, and reconnects with Last-Event-ID without a gap or a duplicate', async () => {
    h = await startTestHost();
    await h.rpc('session.create', { sessionId: 's' });
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('A'), messageId: 'A' });
    await h.model.started(1);
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('B'), messageId: 'B' });
    const m1 = await openMirror(h.url);
    await m1.waitFor((f) => f.type === 'session/queue');
    expect(trace(m1.frames)).toEqual(['session/subscribed', 'running:true', 'Q[B:queued]']);
    await h.rpc('session.create', { sessionId: 't' });
    await m1.waitFor((f) => f.type === 'host/session-added' && f.sessionId === 't');
    await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text('D'), messageId: 'D' });
    await m1.waitFor((f) => f.type === 'session/queue' && q(f) === 'B:queued,D:queued');
    m1.close();
    const lastId = m1.ids.filter((x) => x !== undefined).at(-1)!;
    const seen = m1.frames.filter((f) => f.type === 'session/event' && f.sessionId === 's').map((f) => (f as { event: { seq: number } }).event.seq);
    // while disconnected, the session moves on
    h.model.releaseAll();
    await h.host.live.get('s')!.agent.whenIdle();
    const m2 = await openMirror(h.url, '', { 'last-event-id': lastId });
    const lastSeq = h.host.live.get('s')!.lastSeq;
    await m2.waitFor((f) => f.type === 'session/event' && f.sessionId === 's' && f.event.seq === lastSeq);
    m2.close();
    expect(m2.frames[0]).toEqual({ type: 'session/subscribed', sessionId: 's', lastSeq: seen.at(-1) });
    const replayed = m2.frames.filter((f) => f.type === 'session/event' && f.sessionId === 's').map((f) => (f as { event: { seq: number } }).event.seq);
    expect([...seen, ...replayed]).toEqual(Array.from({ length: lastSeq + 1 }, (_, i) => i).slice(seen[0]));
  });

  it('drops a client that does not read with stream/error instead of buffering without bound', async () => {
    h = await startTestHost({ http: { sse: { maxQueuedFrames: 8 } } });
    await h.rpc('session.create', { sessionId: 's' });
    const url = new URL(h.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`GET /api/stream?sessions=s HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause();
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.pause();
    // the response ends with the last chunk of the chunked encoding (the connection itself may stay open)
    const closed = new Promise<void>((resolve) => socket.on('data', () => Buffer.concat(chunks).toString('latin1').endsWith('\r\n0\r\n\r\n') && resolve()));
    await new Promise((r) => setTimeout(r, 50));
    expect(h.host.listenerCount).toBe(1);
    const big = 'x'.repeat(512 * 1024);
    let n = 0;
    // large prompts until the host gives up on the client that never reads (its mirror stops listening)
    while (h.host.listenerCount > 0 && n < 200) {
      await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: text(big), messageId: `m${n++}` });
    }
    expect(h.host.listenerCount).toBe(0);
    socket.resume();
    await closed;
    const body = Buffer.concat(chunks).toString('utf8');
    // the last frame the client ever gets is the drop notice
    expect(body.slice(body.lastIndexOf('event: '))).toMatch(/^event: stream\/error\ndata: .*slow-consumer/);
    socket.destroy();
  });
});
