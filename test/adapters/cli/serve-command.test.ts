import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveCommand } from '../../../adapters/cli/serve-command.js';
import { runCli } from './support/run-cli.js';

const capture = () => {
  let out = '';
  let err = '';
  return { io: { stdout: { write: (c: string) => (out += c) }, stderr: { write: (c: string) => (err += c) } }, out: () => out, err: () => err };
};

describe('steerlog serve', () => {
  it('prints its usage with --help and refuses bad options', async () => {
    const c = capture();
    expect(await serveCommand(['--help'], c.io)).toBe(0);
    expect(c.out()).toContain('--store <spec>');
    const bad = capture();
    expect(await serveCommand(['--nope'], bad.io)).toBe(2);
    expect(bad.err()).toMatch(/unknown option '?--nope/i);
    expect(c.out()).toContain('--otlp-priority <p>     low (default)');
    const priority = capture();
    expect(await serveCommand(['--otlp', 'http://127.0.0.1:4318', '--otlp-priority', 'high'], priority.io)).toBe(2);
    expect(priority.err()).toContain('--otlp-priority takes normal or low');
    const alone = capture();
    expect(await serveCommand(['--otlp-priority', 'low'], alone.io)).toBe(2);
    expect(alone.err()).toContain('--otlp-priority needs --otlp <endpoint>');
  });

  it('refuses a --principal that records nobody: empty, or without a token (every request would be local)', async () => {
    const saved = process.env['STEERLOG_TOKEN'];
    delete process.env['STEERLOG_TOKEN'];
    // a serve that starts anyway is stopped once it listens (and answers 0, not 2)
    const run = async (args: string[]) => {
      const c = capture();
      const stop = new AbortController();
      const io = { ...c.io, stdout: { write: (t: string) => (t.includes('listening on') && setImmediate(() => stop.abort()), c.io.stdout.write(t)) } };
      return { code: await serveCommand(['--store', 'memory:', '--port', '0', ...args], io, stop.signal), err: c.err() };
    };
    try {
      const empty = await run(['--token', 'a-long-enough-token', '--principal', ' ']);
      expect(empty.code).toBe(2);
      expect(empty.err).toContain('--principal');
      const alone = await run(['--principal', 'alice']);
      expect(alone.code).toBe(2);
      expect(alone.err).toContain('--principal');
    } finally {
      if (saved !== undefined) process.env['STEERLOG_TOKEN'] = saved;
    }
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    const c = capture();
    expect(await serveCommand(['--store', 'memory:', '--host', '0.0.0.0', '--port', '0'], c.io)).toBe(2);
    expect(c.err()).toContain('needs a token');
  });

  it('serves on the default JSONL store layout, prints the URL first, answers, and stops cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-serve-cli-'));
    try {
      const c = capture();
      const stop = new AbortController();
      const done = serveCommand(['--store', `jsonl:${dir}`, '--port', '0'], c.io, stop.signal);
      while (!c.out().includes('listening on')) await new Promise((r) => setTimeout(r, 10));
      const url = /listening on (\S+)/.exec(c.out())![1]!;
      expect(c.out()).toMatch(/^steerlog serve: listening on http:\/\/127\.0\.0\.1:\d+ \(store jsonl:.*, model echo, host host-\w+\)\n$/);
      const res = await fetch(`${url}/api/session.create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'client-request', rpcId: '1', method: 'session.create', payload: { sessionId: 'cli' } }),
      });
      expect(await res.json()).toMatchObject({ result: { ok: true, value: { sessionId: 'cli' } } });
      // stopped at once, inside the log's 20 ms window: the request's line is written at shutdown, not lost
      stop.abort();
      expect(await done).toBe(0);
      const requests = c.err().split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(requests).toEqual([expect.objectContaining({ level: 'info', method: 'POST', path: '/api/session.create', status: 200, sessionId: 'cli' })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--encrypt stores prompts encrypted (keys in <dir>/keys.json); audit with those keys reads them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-serve-enc-'));
    try {
      const c = capture();
      const stop = new AbortController();
      const done = serveCommand(['--store', `jsonl:${dir}`, '--port', '0', '--encrypt'], c.io, stop.signal);
      while (!c.out().includes('listening on')) await new Promise((r) => setTimeout(r, 10));
      const url = /listening on (\S+)/.exec(c.out())![1]!;
      const call = async (method: string, payload: unknown) =>
        (await fetch(`${url}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'client-request', rpcId: '1', method, payload }) })).json();
      await call('session.create', { sessionId: 'enc' });
      expect(await call('session.prompt', { sessionId: 'enc', mode: 'queue', durable: true, content: [{ type: 'text', text: 'SERVE-SECRET-41' }] })).toMatchObject({ result: { ok: true } });
      stop.abort();
      expect(await done).toBe(0);
      expect(existsSync(join(dir, 'keys.json'))).toBe(true);
      for (const f of readdirSync(join(dir, 'streams'))) expect(readFileSync(join(dir, 'streams', f), 'utf8')).not.toContain('SERVE-SECRET-41');
      const audit = JSON.parse((await runCli('audit', '--store', `jsonl:${dir}`, 'enc', '--json')).stdout) as { content?: { readable: number; sealed: number } };
      expect(audit.content!.readable).toBeGreaterThan(0);
      expect(audit.content!.readable).toBe(audit.content!.sealed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
