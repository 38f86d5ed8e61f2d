/**
 * The bare-framework baseline of `bench/host-http.ts`: a Hono app on @hono/node-server (the stack `steerlog serve`
 * uses) that answers `POST /api/session.prompt` with a receipt after parsing the JSON body, and nothing else: no
 * door, no schema, no session, no store. Prints `listening on <url>` like `steerlog serve`.
 *   node --import tsx bench/support/bare-hono.ts
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';

const app = new Hono();
let seq = 0;
app.post('/api/:method', async (c) => {
  const body = (await c.req.json()) as { rpcId: string; payload: { messageId: string; durable?: boolean } };
  return c.json({ type: 'server-response', rpcId: body.rpcId, result: { ok: true, value: { accepted: true, messageId: body.payload.messageId, seq: ++seq, durable: body.payload.durable ?? false } } });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  process.stdout.write(`listening on http://127.0.0.1:${info.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
