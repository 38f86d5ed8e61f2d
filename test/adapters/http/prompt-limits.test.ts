import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../adapters/keys/memory-key-store.js';
import { isHostConfigError, startHttpServer } from '../../../adapters/http/server.js';
import { serveCommand } from '../../../adapters/cli/serve-command.js';
import { Host } from '../../../host/host.js';
import { base64Length, bodyLimitFor, largestImageBytes, PROMPT_ROOM_BYTES } from '../../../host/prompt.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime } from '../../../runtime/runtime.js';
import type { ServerResponse } from '../../../host/schemas.js';
import { FaultyStore } from '../../support/faulty-store.js';
import { GateModel } from '../../support/gate-model.js';
import { errorOf, startTestHost, valueOf, type TestHost } from './http-support.js';

/**
 * The three limits a prompt meets — the request body (`--body-limit`), the image (`--max-image-bytes`) and the
 * store's event (`maxEventBytes`) — agree: an image at the image limit passes the other two, one byte more is
 * `IMAGE_TOO_LARGE` (never a 413 or an event-limit refusal); and a `durable: true` prompt never waits unboundedly.
 */

let hosts: TestHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.close();
  hosts = [];
});
const start = async (...args: Parameters<typeof startTestHost>) => {
  const h = await startTestHost(...args);
  hosts.push(h);
  return h;
};

/** Base64 of `bytes` zero bytes, padded as an encoder pads it. */
const zeros = (bytes: number): string => Buffer.alloc(bytes).toString('base64');

/** The heaviest prompt the room is promised to hold besides its image: the longest ids, 8 KiB of text. */
const heavyPrompt = (h: TestHost, sessionId: string, imageBytes: number, messageId: string) =>
  fetch(`${h.url}/api/session.prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'client-request',
      rpcId: 'r'.repeat(200),
      method: 'session.prompt',
      payload: {
        sessionId,
        mode: 'queue',
        messageId,
        clientTimeZone: 'America/Argentina/ComodRivadavia',
        durable: true,
        content: [
          { type: 'text', text: 'é'.repeat(4096) },
          { type: 'image', mediaType: 'image/png', data: zeros(imageBytes), name: 'n'.repeat(200) },
        ],
      },
    }),
  });

describe('the limits of a prompt', () => {
  it('property: an image at largestImageBytes fits the body and the event limit with the room to spare, and 3 bytes more do not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 64 * 1024, max: 64 * 1024 * 1024 }), fc.option(fc.integer({ min: 64 * 1024, max: 64 * 1024 * 1024 }), { nil: undefined }), fc.boolean(), (maxEventBytes, bodyLimitBytes, sealed) => {
        const n = largestImageBytes({ maxEventBytes, sealed, ...(bodyLimitBytes !== undefined ? { bodyLimitBytes } : {}) });
        // stored: the base64, and when sealed the base64 of (that plus the room), plus the room
        const stored = (bytes: number) => (sealed ? base64Length(base64Length(bytes) + PROMPT_ROOM_BYTES) : base64Length(bytes)) + PROMPT_ROOM_BYTES;
        expect(stored(n)).toBeLessThanOrEqual(maxEventBytes);
        if (bodyLimitBytes !== undefined) expect(bodyLimitFor(n)).toBeLessThanOrEqual(bodyLimitBytes);
        // the largest such: one more base64 quantum fails one of them
        expect(stored(n + 3) > maxEventBytes || (bodyLimitBytes !== undefined && bodyLimitFor(n + 3) > bodyLimitBytes)).toBe(true);
      }),
    );
  });

  it('with the defaults the image limit is the largest a 1 MiB body and a 1 MiB event carry: 774 144 bytes', async () => {
    const h = await start();
    expect(h.host.maxImageBytes).toBe(774_144);
    expect(bodyLimitFor(h.host.maxImageBytes)).toBe(1024 * 1024);
  });

  it('with the defaults an image at the limit is admitted and stored; one byte more is IMAGE_TOO_LARGE (HTTP 200), not a 413 or an event-limit refusal', async () => {
    const h = await start();
    const sessionId = 's'.repeat(128);
    valueOf(await h.rpc('session.create', { sessionId }));
    const limit = h.host.maxImageBytes;
    const at = await heavyPrompt(h, sessionId, limit, 'm'.repeat(128));
    expect(at.status).toBe(200);
    const receipt = valueOf<{ seq: number; durable: boolean }>((await at.json()) as ServerResponse);
    expect(receipt.durable).toBe(true);
    const stored = [];
    for await (const e of h.store.read(sessionId)) stored.push(e);
    expect(stored[receipt.seq]!.type).toBe('agent/inbox/spliced');
    const over = await heavyPrompt(h, sessionId, limit + 1, 'over');
    expect(over.status).toBe(200);
    expect(errorOf((await over.json()) as ServerResponse)).toMatchObject({ code: 'attachment-error', details: { reason: 'IMAGE_TOO_LARGE', bytes: limit + 1, limit } });
    // far over the limit (the 800 KiB image of the report): the body limit refuses it before it is read
    expect((await heavyPrompt(h, sessionId, 800 * 1024, 'far-over')).status).toBe(413);
    expect(h.host.live.get(sessionId)!.agent.events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: { id: string }[] }).inserted.some((m) => m.id !== 'm'.repeat(128)))).toEqual([]);
  });

  it('with sealed content (--encrypt) the default limit is lower and an image at it is admitted', async () => {
    const h = await start({ runtime: (options) => createRuntime({ ...options, encryption: { keys: new MemoryKeyStore() } }) });
    expect(h.host.maxImageBytes).toBe(largestImageBytes({ maxEventBytes: 1024 * 1024, sealed: true }));
    expect(h.host.maxImageBytes).toBeLessThan(774_144);
    const sessionId = 'sealed';
    valueOf(await h.rpc('session.create', { sessionId }));
    const at = await heavyPrompt(h, sessionId, h.host.maxImageBytes, 'at-limit');
    expect(valueOf((await at.json()) as ServerResponse)).toMatchObject({ accepted: true, durable: true });
  });

  it('refuses a configuration whose image limit cannot be reached: the Host over the event limit, the server under the body limit, serve at start', async () => {
    const runtime = createRuntime({ store: new FaultyStore(), model: new GateModel(), logger: silentLogger });
    expect(() => new Host({ runtime, logger: silentLogger, maxImageBytes: 5 * 1024 * 1024 })).toThrow(/maxImageBytes: 5242880 .* at most 774144/);
    for (const durableTimeoutMs of [0, -1, 1.5, Number.NaN]) expect(() => new Host({ runtime, logger: silentLogger, durableTimeoutMs }), String(durableTimeoutMs)).toThrow(/durableTimeoutMs/);
    const host = new Host({ runtime, logger: silentLogger });
    await expect(startHttpServer({ host, port: 0, bodyLimitBytes: 64 * 1024 })).rejects.toSatisfy(isHostConfigError);
    const small = new Host({ runtime, logger: silentLogger, maxImageBytes: largestImageBytes({ maxEventBytes: runtime.maxEventBytes, sealed: false, bodyLimitBytes: 64 * 1024 }) });
    const server = await startHttpServer({ host: small, port: 0, bodyLimitBytes: 64 * 1024 });
    await server.close();
    let err = '';
    const io = { stdout: { write: () => {} }, stderr: { write: (c: string) => void (err += c) } };
    expect(await serveCommand(['--store', 'memory:', '--port', '0', '--max-image-bytes', String(5 * 1024 * 1024)], io)).toBe(2);
    expect(err).toMatch(/--max-image-bytes 5242880 cannot be reached: .*at most 774144/);
  });
});

describe('durable: true when the store does not answer', () => {
  it('refuses a durableTimeoutMs no timer can hold (past 2^31 - 1 ms, Node fires such a timer at once: every durable prompt would time out)', () => {
    const runtime = createRuntime({ store: new FaultyStore(), model: new GateModel(), logger: silentLogger });
    expect(() => new Host({ runtime, logger: silentLogger, durableTimeoutMs: 2 ** 31 - 1 })).not.toThrow();
    for (const durableTimeoutMs of [2 ** 31, 25 * 24 * 3600 * 1000]) expect(() => new Host({ runtime, logger: silentLogger, durableTimeoutMs }), String(durableTimeoutMs)).toThrow(/durableTimeoutMs/);
  });

  it('answers durable-timeout {seq, timeoutMs} instead of waiting; the admission is live; a retry once the store answers gets the receipt', async () => {
    const store = new FaultyStore();
    const h = await start({ store, host: { durableTimeoutMs: 50 } });
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    let release!: () => void;
    store.hold(new Promise<void>((resolve) => (release = resolve)));
    let seq: number;
    try {
      const refused = errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'A' }], messageId: 'm-1', durable: true }));
      expect(refused).toMatchObject({ code: 'durable-timeout', details: { seq: expect.any(Number), timeoutMs: 50 } });
      seq = refused.details['seq'] as number;
      const splice = h.host.live.get('s')!.agent.events[seq]!;
      expect(splice.type).toBe('agent/inbox/spliced');
      expect((splice.data as { inserted: { id: string }[] }).inserted.map((m) => m.id)).toEqual(['m-1']);
      // a retry while the store still does not answer: the same refusal, nothing admitted twice
      expect(errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'A' }], messageId: 'm-1', durable: true }))).toMatchObject({ code: 'durable-timeout', details: { seq } });
    } finally {
      release();
    }
    const retry = valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'A' }], messageId: 'm-1', durable: true }));
    expect(retry).toEqual({ accepted: true, messageId: 'm-1', seq, durable: true, duplicate: true });
    const ids = [];
    for await (const e of store.read('s')) if (e.type === 'agent/inbox/spliced') ids.push(...(e.data as { inserted: { id: string }[] }).inserted.map((m) => m.id));
    expect(ids.filter((id) => id === 'm-1')).toHaveLength(1);
  }, 20_000);

  it('a prompt sent without a messageId learns the id the host gave it from the durable-timeout, so its retry is not a second admission', async () => {
    const store = new FaultyStore();
    const h = await start({ store, host: { durableTimeoutMs: 50 } });
    valueOf(await h.rpc('session.create', { sessionId: 's' }));
    let release!: () => void;
    store.hold(new Promise<void>((resolve) => (release = resolve)));
    let messageId: unknown;
    try {
      const refused = errorOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'A' }], durable: true }));
      expect(refused).toMatchObject({ code: 'durable-timeout', details: { seq: expect.any(Number), timeoutMs: 50, messageId: expect.any(String) } });
      messageId = refused.details['messageId'];
      const splice = h.host.live.get('s')!.agent.events[refused.details['seq'] as number]!;
      expect((splice.data as { inserted: { id: string }[] }).inserted.map((m) => m.id)).toEqual([messageId]);
    } finally {
      release();
    }
    const retry = valueOf(await h.rpc('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'A' }], messageId, durable: true }));
    expect(retry).toMatchObject({ accepted: true, messageId, duplicate: true });
  }, 20_000);
});
