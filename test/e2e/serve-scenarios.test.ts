import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from '../../host/schemas.js';
import { openStore } from '../../adapters/store/open-store.js';
import { PG_URL, dropSchema, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

/**
 * The Host's scenarios over HTTP against a real `steerlog serve` process, on JSONL and on PostgreSQL. Each asserts
 * the exact durable sequence of its session (a compact trace of session.history), and at the end the store, read
 * by this process, holds exactly what the host reported for every session.
 */

type Frame = { type: string; sseId?: string; [k: string]: any };
type Entry = { event: { seq: number; type: string; data: any }; class?: string };
const ok = <T = any>(r: ServerResponse): T => {
  if (!r.result.ok) throw new Error(`expected ok: ${JSON.stringify(r.result.error)}`);
  return r.result.value as T;
};
const err = (r: ServerResponse) => {
  if (r.result.ok) throw new Error(`expected an error: ${JSON.stringify(r.result.value)}`);
  return r.result.error;
};
const t = (s: string) => [{ type: 'text', text: s }];
const label = (e: Entry): string | null => {
  const d = e.event.data;
  switch (e.event.type) {
    case 'session/created':
      return 'created';
    case 'agent/inbox/spliced': {
      const list = d.target === 'next-turn' ? 'NT' : 'NS';
      return `${list}${d.removedCount ? `-${d.removedCount}${d.outcome === 'canceled' ? 'x' : ''}` : ''}${d.inserted.length ? `+${d.inserted.map((m: { id: string }) => m.id).join(',')}` : ''}`;
    }
    case 'turn/start':
      return `turn ${d.turn}`;
    case 'turn/end':
      return `end ${d.turn} ${d.reason.kind}${d.reason.kind === 'aborted' ? `:${d.reason.reason.kind}` : ''}`;
    case 'step/start':
      return `step ${d.turn}.${d.step}`;
    case 'user/message':
      return `user ${d.id}:${e.class}`;
    case 'assistant/message':
      return `reply ${d.message.content.map((b: { text?: string }) => b.text ?? '').join('')}${d.interrupted ? ' (interrupted)' : ''}`;
    default:
      return null;
  }
};

const STORES = [
  { name: 'jsonl', args: [] as string[], make: () => ({ spec: `jsonl:${mkdtempSync(join(tmpdir(), 'steerlog-serve-'))}`, drop: async (spec: string) => removeDir(spec.slice(6)) }) },
  {
    name: 'postgres',
    // a short lease, so the host restarted after kill -9 takes the session over quickly
    args: ['--lease-ms', '600'],
    make: () => {
      const schema = uniqueSchema('serve');
      const url = new URL(PG_URL);
      url.searchParams.set('schema', schema);
      return { spec: url.toString(), drop: async () => dropSchema(schema) };
    },
  },
];

describe.each(STORES)('steerlog serve scenarios on $name', ({ make, args }) => {
  let serve: ServeProcess;
  let store: { spec: string; drop: (spec: string) => Promise<void> };
  const sessions = new Map<string, Entry[]>();

  const history = async (sessionId: string): Promise<Entry[]> => {
    const out: Entry[] = [];
    let after = -1;
    for (;;) {
      const page = ok<{ events: Entry[]; nextAfter: number | null }>(await serve.rpc('session.history', { sessionId, after, limit: 1000 }));
      out.push(...page.events);
      if (page.nextAfter === null) break;
      after = page.nextAfter;
    }
    sessions.set(sessionId, out);
    return out;
  };
  const trace = async (sessionId: string) => (await history(sessionId)).map(label).filter((x): x is string => x !== null);
  /** Waits until the session is idle and its last event is a turn/end (polling session.get). */
  const settled = async (sessionId: string, turns: number) => {
    for (;;) {
      const s = ok<{ running: boolean; lastTurn: number; openTurn: number | null }>(await serve.rpc('session.get', { sessionId }));
      if (!s.running && s.lastTurn >= turns && s.openTurn === null) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const create = async (sessionId: string) => ok(await serve.rpc('session.create', { sessionId }));
  const prompt = (sessionId: string, id: string, text: string, mode: 'queue' | 'steer' = 'queue') =>
    serve.rpc('session.prompt', { sessionId, mode, content: t(text), messageId: id });
  const queue = async (sessionId: string) =>
    ok<{ queue: { id: string; placement: string }[] }>(await serve.rpc('session.get', { sessionId })).queue.map((r) => `${r.id}:${r.placement}`);
  /** The frames a real SSE client of `GET /api/stream?sessions=<id>` receives, read until `until(frames)` holds. */
  const frames = async (sessionId: string, until: (got: Frame[]) => boolean, opts: { lastEventId?: string; onFrame?: (f: Frame) => void } = {}): Promise<Frame[]> => {
    const { lastEventId, onFrame } = opts;
    const abort = new AbortController();
    const res = await fetch(`${serve.url}/api/stream?sessions=${sessionId}`, { signal: abort.signal, headers: lastEventId !== undefined ? { 'last-event-id': lastEventId } : {} });
    const got: Frame[] = [];
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      while (!until(got)) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          const id = block.split('\n').find((l) => l.startsWith('id:'))?.slice(3).trim();
          if (!data) continue;
          const frame: Frame = { ...JSON.parse(data), ...(id !== undefined ? { sseId: id } : {}) };
          got.push(frame);
          onFrame?.(frame);
        }
      }
    } finally {
      abort.abort();
    }
    return got;
  };

  beforeAll(async () => {
    store = make();
    serve = await startServe(store.spec, args);
  }, 120_000);
  afterAll(async () => {
    if (serve) {
      serve.release('never');
      expect(await serve.stop()).toBe(0);
      // the store holds exactly what the host reported (read back by this process, after the host stopped)
      const opened = await openStore(store.spec);
      try {
        for (const [id, reported] of sessions) {
          const stored: string[] = [];
          for await (const e of opened.read(id)) stored.push(`${e.revision}:${e.type}`);
          expect(stored.slice(0, reported.length), id).toEqual(reported.map((e) => `${e.event.seq}:${e.event.type}`));
        }
      } finally {
        await opened.close();
      }
      removeDir(serve.gateDir);
    }
    await store?.drop(store.spec);
  }, 60_000);

  it('1: idle prompt, queue — the prompt opens turn 1 and is claimed inside the call', async () => {
    await create('s1');
    const receipt = ok(await prompt('s1', 'A', 'A'));
    expect(receipt).toEqual({ accepted: true, messageId: 'A', seq: 1, durable: false });
    await settled('s1', 1);
    expect(await trace('s1')).toEqual(['created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'reply reply: A', 'end 1 completed']);
  });

  it('2: idle prompt, steer — opens a turn and replays as steering', async () => {
    await create('s2');
    ok(await prompt('s2', 'A', 'A', 'steer'));
    await settled('s2', 1);
    expect(await trace('s2')).toEqual(['created', 'NS+A', 'turn 1', 'NS-1', 'step 1.1', 'user A:steering', 'reply reply: A', 'end 1 completed']);
  });

  it('3 and 4: running prompt queued runs as turn 2; running steer enters step 2 of turn 1', async () => {
    await create('s3');
    ok(await prompt('s3', 'A', 'A [hold:s3]'));
    await serve.started('s3');
    ok(await prompt('s3', 'B', 'B'));
    ok(await prompt('s3', 'C', 'C', 'steer'));
    expect(await queue('s3')).toEqual(['B:queued', 'C:steering']);
    serve.release('s3');
    await settled('s3', 2);
    expect(await trace('s3')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'reply reply: A [hold:s3]',
      'NS-1', 'step 1.2', 'user C:steering', 'reply reply: C', 'end 1 completed',
      'turn 2', 'NT-1', 'step 2.1', 'user B:prompt', 'reply reply: B', 'end 2 completed',
    ]);
  });

  it('5 and 21: stop keeps the queue parked; the next prompt runs the parked steering and prompt first, in one step, then its own turn', async () => {
    await create('s5');
    ok(await prompt('s5', 'A', 'A [hold:s5]'));
    await serve.started('s5');
    ok(await prompt('s5', 'B', 'B'));
    ok(await prompt('s5', 'C', 'C', 'steer'));
    expect(ok(await serve.rpc('session.cancel', { sessionId: 's5' }))).toEqual({ accepted: true });
    await settled('s5', 1);
    expect(await queue('s5')).toEqual(['B:queued', 'C:steering']);
    ok(await prompt('s5', 'W', 'W'));
    await settled('s5', 3);
    expect(await trace('s5')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'end 1 aborted:user',
      'NT+W', 'turn 2', 'NS-1', 'NT-1', 'step 2.1', 'user C:steering', 'user B:prompt', 'reply reply: A [hold:s5] + C + B', 'end 2 completed',
      'turn 3', 'NT-1', 'step 3.1', 'user W:prompt', 'reply reply: W', 'end 3 completed',
    ]);
  });

  it('9, 10, 11, 13, 16: edit keeps the id, a non-text edit is refused, remove cancels, strict steer moves the same id, a steering id cannot be steered', async () => {
    await create('s9');
    ok(await prompt('s9', 'A', 'A [hold:s9]'));
    await serve.started('s9');
    ok(await serve.rpc('session.prompt', { sessionId: 's9', mode: 'queue', content: [{ type: 'text', text: 'B' }, { type: 'image', mediaType: 'image/png', data: 'AAAA' }], messageId: 'B' }));
    ok(await prompt('s9', 'D', 'D'));
    ok(await prompt('s9', 'E', 'E'));
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's9', itemId: 'B', action: { kind: 'edit', content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }] } }))).toMatchObject({ code: 'attachment-error', details: { reason: 'QUEUE_EDIT_NON_TEXT' } });
    ok(await serve.rpc('session.updateQueue', { sessionId: 's9', itemId: 'B', action: { kind: 'edit', content: t('B2') } }));
    ok(await serve.rpc('session.updateQueue', { sessionId: 's9', itemId: 'E', action: { kind: 'remove' } }));
    ok(await serve.rpc('session.updateQueue', { sessionId: 's9', itemId: 'D', action: { kind: 'steer' } }));
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's9', itemId: 'D', action: { kind: 'steer' } }))).toEqual({ code: 'steer-unavailable', message: expect.any(String), details: { itemId: 'D' } });
    expect(await queue('s9')).toEqual(['B:queued', 'D:steering']);
    serve.release('s9');
    await settled('s9', 2);
    expect(await trace('s9')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NT+D', 'NT+E',
      'NT-1x+B', 'NT-1x', 'NT-1x', 'NS+D',
      'reply reply: A [hold:s9]', 'NS-1', 'step 1.2', 'user D:steering', 'reply reply: D', 'end 1 completed',
      'turn 2', 'NT-1', 'step 2.1', 'user B:prompt', 'reply reply: B2', 'end 2 completed',
    ]);
  });

  it('12, 14, 15: an edit or steer after the claim is queue-item-not-found; steer on an idle session is steer-unavailable', async () => {
    await create('s12');
    ok(await prompt('s12', 'A', 'A [hold:s12a]'));
    await serve.started('s12a');
    ok(await prompt('s12', 'B', 'B [hold:s12b]'));
    serve.release('s12a');
    await serve.started('s12b');
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's12', itemId: 'B', action: { kind: 'edit', content: t('B2') } }))).toMatchObject({ code: 'queue-item-not-found', details: { itemId: 'B' } });
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's12', itemId: 'B', action: { kind: 'steer' } })).code).toBe('queue-item-not-found');
    ok(await prompt('s12', 'D', 'D'));
    ok(await serve.rpc('session.cancel', { sessionId: 's12' }));
    await settled('s12', 2);
    expect(await queue('s12')).toEqual(['D:queued']);
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's12', itemId: 'D', action: { kind: 'steer' } })).code).toBe('steer-unavailable');
    expect(await queue('s12')).toEqual(['D:queued']);
    expect(await trace('s12')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'reply reply: A [hold:s12a]', 'end 1 completed',
      'turn 2', 'NT-1', 'step 2.1', 'user B:prompt', 'NT+D', 'end 2 aborted:user',
    ]);
  });

  it('22: stop, then a prompt at once: every parked prompt and the new one run, FIFO', async () => {
    await create('s22');
    ok(await prompt('s22', 'A', 'A [hold:s22]'));
    await serve.started('s22');
    ok(await prompt('s22', 'B', 'B'));
    ok(await prompt('s22', 'D', 'D'));
    await Promise.all([serve.rpc('session.cancel', { sessionId: 's22' }).then(ok), prompt('s22', 'W', 'W').then(ok)]);
    await settled('s22', 4);
    const tr = await trace('s22');
    expect(tr.filter((l) => l.startsWith('user'))).toEqual(['user A:prompt', 'user B:prompt', 'user D:prompt', 'user W:prompt']);
    expect(tr.filter((l) => l.startsWith('end'))).toEqual(['end 1 aborted:user', 'end 2 completed', 'end 3 completed', 'end 4 completed']);
  });

  it('24: a rejecting pre-step (a plugin the model module installs) ends the turn blocked: no step, the claimed prompt is consumed, a prompt queued meanwhile stays parked until the next waking send', async () => {
    await create('s24');
    ok(await prompt('s24', 'A', 'A [reject:s24]'));
    await serve.started('s24');
    ok(await prompt('s24', 'B', 'B'));
    serve.release('s24');
    await settled('s24', 1);
    expect(await queue('s24')).toEqual(['B:queued']);
    expect(await trace('s24')).toEqual(['created', 'NT+A', 'turn 1', 'NT-1', 'NT+B', 'end 1 blocked']);
    ok(await prompt('s24', 'W', 'W'));
    await settled('s24', 3);
    expect(await trace('s24')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'NT+B', 'end 1 blocked',
      'NT+W', 'turn 2', 'NT-1', 'step 2.1', 'user B:prompt', 'reply reply: B', 'end 2 completed',
      'turn 3', 'NT-1', 'step 3.1', 'user W:prompt', 'reply reply: W', 'end 3 completed',
    ]);
  });

  it('23: a default cancel (a plugin in the session, no keepInbox) clears both lists with one canceled splice each, next-step first; nothing runs after', async () => {
    await create('s23');
    ok(await prompt('s23', 'A', 'A [hold:s23]'));
    await serve.started('s23');
    ok(await prompt('s23', 'B', 'B'));
    ok(await prompt('s23', 'C', 'C', 'steer'));
    ok(await prompt('s23', 'D', 'D [cancel]'));
    await settled('s23', 1);
    expect(await queue('s23')).toEqual([]);
    expect(await trace('s23')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'NT+D', 'NS-1x', 'NT-2x', 'end 1 aborted:hook',
    ]);
  });

  it('6: an idle inject (the plugin injects X into a new session) opens no turn; the next prompt runs X and A in its first step', async () => {
    await create('inject-s6');
    expect(ok(await serve.rpc('session.get', { sessionId: 'inject-s6' }))).toMatchObject({ running: false, openTurn: null });
    expect(await queue('inject-s6')).toEqual(['X:context']);
    expect(await trace('inject-s6')).toEqual(['created', 'NS+X']);
    ok(await prompt('inject-s6', 'A', 'A'));
    await settled('inject-s6', 1);
    expect(await trace('inject-s6')).toEqual(['created', 'NS+X', 'NT+A', 'turn 1', 'NS-1', 'NT-1', 'step 1.1', 'user X:context', 'user A:prompt', 'reply reply: X + A', 'end 1 completed']);
  });

  it('7 and 8: the queue lists next-turn then next-step (user steering, then plugin context); at the turn boundary one splice claims next-step, one claims the head of next-turn', async () => {
    await create('s7');
    ok(await prompt('s7', 'A', 'A [hold:s7]'));
    await serve.started('s7');
    ok(await prompt('s7', 'B', 'B'));
    ok(await prompt('s7', 'C', 'C [inject:X]', 'steer'));
    ok(await prompt('s7', 'D', 'D'));
    expect(await queue('s7')).toEqual(['B:queued', 'D:queued', 'C:steering', 'X:context']);
    ok(await serve.rpc('session.cancel', { sessionId: 's7' }));
    await settled('s7', 1);
    expect(await queue('s7')).toEqual(['B:queued', 'D:queued', 'C:steering', 'X:context']);
    ok(await serve.rpc('session.wake', { sessionId: 's7' }));
    await settled('s7', 3);
    expect(await trace('s7')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'NS+X', 'NT+D', 'end 1 aborted:user',
      'turn 2', 'NS-2', 'NT-1', 'step 2.1', 'user C:steering', 'user X:context', 'user B:prompt', 'reply reply: A [hold:s7] + C [inject:X] + X + B', 'end 2 completed',
      'turn 3', 'NT-1', 'step 3.1', 'user D:prompt', 'reply reply: D', 'end 3 completed',
    ]);
  });

  it('25: session.history classifies each user message of the log: prompt, steering (steered or moved by a strict steer), context (a relay, a coordinator follow-up)', async () => {
    await create('s25');
    ok(await prompt('s25', 'A', 'A [hold:s25]'));
    await serve.started('s25');
    ok(await prompt('s25', 'B', 'B'));
    ok(await prompt('s25', 'C', 'C [inject:R:subagent-report] [followup:F:coordinator]', 'steer'));
    ok(await serve.rpc('session.updateQueue', { sessionId: 's25', itemId: 'B', action: { kind: 'steer' } }));
    expect(await queue('s25')).toEqual(['F:queued', 'C:steering', 'R:context', 'B:steering']);
    serve.release('s25');
    await settled('s25', 2);
    expect(await trace('s25')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'NS+R', 'NT+F', 'NT-1x', 'NS+B',
      'reply reply: A [hold:s25]', 'NS-3', 'step 1.2', 'user C:steering', 'user R:context', 'user B:steering',
      'reply reply: C [inject:R:subagent-report] [followup:F:coordinator] + R + B', 'end 1 completed',
      'turn 2', 'NT-1', 'step 2.1', 'user F:context', 'reply reply: F', 'end 2 completed',
    ]);
  });

  it('20: a client subscribing gets session/subscribed, then a queue baseline only when work is pending; reconnecting with Last-Event-ID replays exactly the events after it', async () => {
    await create('s20');
    ok(await prompt('s20', 'A', 'A [hold:s20]'));
    await serve.started('s20');
    ok(await prompt('s20', 'B', 'B'));
    ok(await prompt('s20', 'C', 'C', 'steer'));
    ok(await serve.rpc('session.cancel', { sessionId: 's20' }));
    await settled('s20', 1);
    const isEnd3 = (f: Frame) => f.type === 'session/event' && f.event.type === 'turn/end' && f.event.data.turn === 3;
    // the parked queue comes as a baseline; a prompt sent once it arrived runs B and C, then W
    const live = await frames('s20', (got) => got.some(isEnd3), {
      onFrame: (f) => void (f.type === 'session/queue' && f.seq === 9 ? prompt('s20', 'W', 'W').then(ok) : undefined),
    });
    expect(live.slice(0, 3)).toEqual([
      { type: 'session/subscribed', sessionId: 's20', lastSeq: 11 },
      { type: 'host/session-status', sessionId: 's20', running: false },
      { type: 'session/queue', sessionId: 's20', seq: 9, items: [expect.objectContaining({ id: 'B', placement: 'queued' }), expect.objectContaining({ id: 'C', placement: 'steering' })] },
    ]);
    expect(await trace('s20')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NS+C', 'end 1 aborted:user',
      'NT+W', 'turn 2', 'NS-1', 'NT-1', 'step 2.1', 'user C:steering', 'user B:prompt', 'reply reply: A [hold:s20] + C + B', 'end 2 completed',
      'turn 3', 'NT-1', 'step 3.1', 'user W:prompt', 'reply reply: W', 'end 3 completed',
    ]);
    const tr = sessions.get('s20')!;
    const liveEvents = live.filter((f) => f.type === 'session/event');
    expect(liveEvents.map((f) => f.event.seq)).toEqual(tr.filter((e) => e.event.seq > 11).map((e) => e.event.seq));
    // reconnect from the cursor of a mid-stream event: exactly the events after it, no gap, no duplicate
    const cut = liveEvents[3]!;
    const again = await frames('s20', (got) => got.some(isEnd3), { lastEventId: cut.sseId! });
    expect(again[0]).toEqual({ type: 'session/subscribed', sessionId: 's20', lastSeq: cut.event.seq });
    expect(again.filter((f) => f.type === 'session/event').map((f) => f.event.seq)).toEqual(tr.filter((e) => e.event.seq > cut.event.seq).map((e) => e.event.seq));
    // an idle session with nothing pending: no baseline (an absent baseline means an empty queue); the next frames are the new prompt's
    await create('s20b');
    ok(await prompt('s20b', 'A', 'A'));
    await settled('s20b', 1);
    const idle = await frames('s20b', (got) => got.some((f) => f.type === 'session/event'), {
      onFrame: (f) => void (f.type === 'host/session-status' && !f.running ? prompt('s20b', 'Z', 'Z').then(ok) : undefined),
    });
    expect(idle.slice(0, 2)).toEqual([{ type: 'session/subscribed', sessionId: 's20b', lastSeq: 10 }, { type: 'host/session-status', sessionId: 's20b', running: false }]);
    expect(idle.filter((f) => f.type === 'session/queue').every((f) => f.seq > 10)).toBe(true);
    await settled('s20b', 2);
    expect(await trace('s20b')).toEqual(['created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'reply reply: A', 'end 1 completed', 'NT+Z', 'turn 2', 'NT-1', 'step 2.1', 'user Z:prompt', 'reply reply: Z', 'end 2 completed']);
  });

  it('17: a strict steer while a stop is still converging moves the row to the tail of next-turn; after convergence each parked prompt runs as its own turn, the steered one as an ordinary prompt', async () => {
    await create('s17');
    ok(await prompt('s17', 'A', 'A [hold:s17] [slowstop:s17x]'));
    await serve.started('s17');
    ok(await prompt('s17', 'B', 'B'));
    ok(await prompt('s17', 'D', 'D'));
    ok(await serve.rpc('session.cancel', { sessionId: 's17' }));
    await serve.started('s17x');
    expect(ok(await serve.rpc('session.get', { sessionId: 's17' }))).toMatchObject({ running: true });
    ok(await serve.rpc('session.updateQueue', { sessionId: 's17', itemId: 'B', action: { kind: 'steer' } }));
    expect(await queue('s17')).toEqual(['D:queued', 'B:queued']);
    serve.release('s17x');
    await settled('s17', 3);
    // the latched wake runs the parked work with no further send
    expect(await trace('s17')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'NT+D', 'NT-1x', 'NT+B', 'end 1 aborted:user',
      'turn 2', 'NT-1', 'step 2.1', 'user D:prompt', 'reply reply: A [hold:s17] [slowstop:s17x] + D', 'end 2 completed',
      'turn 3', 'NT-1', 'step 3.1', 'user B:prompt', 'reply reply: B', 'end 3 completed',
    ]);
  });

  it('18: a waking steer that lands right after the last turn/end, before the driver goes idle, still runs (the gap is closed: it opens the next turn)', async () => {
    await create('s18');
    ok(await prompt('s18', 'A', 'A [late:E]'));
    await settled('s18', 2);
    expect(await queue('s18')).toEqual([]);
    expect(await trace('s18')).toEqual([
      'created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'reply reply: A [late:E]', 'end 1 completed',
      'NS+E', 'turn 2', 'NS-1', 'step 2.1', 'user E:steering', 'reply reply: E', 'end 2 completed',
    ]);
  });

  it('27: error reporting', async () => {
    expect(err(await prompt('nobody', 'x', 'x')).code).toBe('session-not-found');
    expect(err(await serve.rpc('session.prompt', { sessionId: 'nobody', mode: 'queue', content: t('x'), clientTimeZone: 'Mars/Base' }))).toMatchObject({ code: 'invalid-time-zone', details: { value: 'Mars/Base' } });
    expect(err(await serve.rpc('session.prompt', { sessionId: 's1', mode: 'now', content: t('x') })).code).toBe('bad-request');
    expect(err(await serve.rpc('session.prompt', { sessionId: 's1', mode: 'queue' })).code).toBe('bad-request');
    expect(err(await serve.rpc('session.cancel', { sessionId: 'nobody' })).code).toBe('session-not-found');
  });

  it('26: after a crash (kill -9 mid-turn), a cold session resumes once for two concurrent prompts: the open turn is closed interrupted, parked work runs first', async () => {
    await create('s26');
    ok(await prompt('s26', 'A', 'A [hold:s26]'));
    await serve.started('s26');
    ok(await serve.rpc('session.prompt', { sessionId: 's26', mode: 'queue', content: t('B'), messageId: 'B', durable: true }));
    await serve.kill9();
    serve = await startServe(store.spec, args, serve.gateDir);
    // on PostgreSQL the dead host's lease runs out first (agent-busy names the owner until then)
    for (;;) {
      const r = await serve.rpc('session.updateQueue', { sessionId: 's26', itemId: 'B', action: { kind: 'remove' } });
      if (r.result.ok || r.result.error.code !== 'agent-busy') break;
      expect(r.result.error.details).toMatchObject({ reason: 'owned-elsewhere', owner: { hostId: expect.any(String) } });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // cold: never resumed by queue edits or cancel
    expect(err(await serve.rpc('session.updateQueue', { sessionId: 's26', itemId: 'B', action: { kind: 'remove' } })).code).toBe('queue-item-not-found');
    expect(err(await serve.rpc('session.cancel', { sessionId: 's26' })).code).toBe('session-not-found');
    expect(await queue('s26')).toEqual(['B:queued']);
    const [w1, w2] = await Promise.all([prompt('s26', 'W1', 'W1'), prompt('s26', 'W2', 'W2')]);
    ok(w1);
    ok(w2);
    await settled('s26', 4);
    const tr = await trace('s26');
    expect(tr.slice(0, 8)).toEqual(['created', 'NT+A', 'turn 1', 'NT-1', 'step 1.1', 'user A:prompt', 'NT+B', 'end 1 interrupted']);
    expect(tr.filter((l) => l === 'end 1 interrupted')).toHaveLength(1);
    expect(tr.filter((l) => l.startsWith('user'))).toEqual(['user A:prompt', 'user B:prompt', expect.stringMatching(/^user W[12]:prompt$/), expect.stringMatching(/^user W[12]:prompt$/)]);
  }, 120_000);
});
