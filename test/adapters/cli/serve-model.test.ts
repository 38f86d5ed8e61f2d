import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isModelSpecError, openModel, readModelKeyFile } from '../../../adapters/cli/serve-model.js';
import type { ModelPort } from '../../../runtime/ports/model.js';

describe('openModel: a module: model and its optional setup(agent)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-model-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return `module:${path}`;
  };
  const model = `export default { provider: 't', model: 't', complete: async () => ({ content: [], finishReason: 'stop' }) };`;

  it('returns the module setup export next to its model, and none when the module has none', async () => {
    const withSetup = await openModel(write('with.mjs', `${model}\nexport const setup = (agent) => { agent.touched = true; };`), {});
    const agent: Record<string, unknown> = {};
    withSetup.setup!(agent as never, { children: {} as never });
    expect(agent).toEqual({ touched: true });
    expect((await openModel(write('without.mjs', model), {})).setup).toBeUndefined();
  });

  it('refuses a setup export that is not a function, with a typed error', async () => {
    const refused = await openModel(write('bad.mjs', `${model}\nexport const setup = 42;`), {}).catch((e: unknown) => e);
    expect(isModelSpecError(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/setup is not a function/);
  });
});

describe('openModel: openai: and anthropic: — flags win over the providers’ environment variables', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-model-key-'));
  let server: Server | null = null;
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });
  /** A stub that records each request's path and authorization, and refuses it 400 (one attempt, no retry). */
  const seen: string[] = [];
  const stubUrl = async (): Promise<string> => {
    server ??= createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.url} ${req.headers.authorization ?? ''}`);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }));
      });
    });
    if (!server.listening) await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const ask = (model: ModelPort) =>
    model.complete({ messages: [], turn: 1, step: 1, attempt: 1, tools: [], signal: new AbortController().signal, onChunk: () => {} }).catch((e: unknown) => (e as { failure?: unknown }).failure ?? e);

  it('--model-base-url and the key file win over the environment, for both providers', async () => {
    const url = await stubUrl();
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, ' k-file \n');
    const apiKey = await readModelKeyFile(keyFile);
    const wrongEnv = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k-env', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_API_KEY: 'k-env' };
    const anthropic = await openModel('anthropic:c', wrongEnv, { baseUrl: url, apiKey });
    const openai = await openModel('openai:m', wrongEnv, { baseUrl: `${url}/v1`, apiKey });
    expect([anthropic.model.provider, openai.model.provider]).toEqual(['anthropic', 'openai']);
    await ask(anthropic.model);
    await ask(openai.model);
    expect(seen).toEqual(['/v1/messages Bearer k-file', '/v1/chat/completions Bearer k-file']);
  });

  it('without flags, the providers’ environment variables: OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY', async () => {
    const url = await stubUrl();
    seen.length = 0;
    const env = { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'k-openai', ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'k-anthropic' };
    await ask((await openModel('anthropic:c', env)).model);
    await ask((await openModel('openai:m', env)).model);
    expect(seen).toEqual(['/v1/messages Bearer k-anthropic', '/v1/chat/completions Bearer k-openai']);
  });

  it('refuses a provider model without a name, provider flags on other models, an empty key file, a bad max-tokens', async () => {
    const refusals = await Promise.all([
      openModel('anthropic:', {}).catch((e: unknown) => e),
      openModel('echo', {}, { baseUrl: 'http://x' }).catch((e: unknown) => e),
      readModelKeyFile(join(dir, 'missing')).catch((e: unknown) => e),
      (writeFileSync(join(dir, 'empty'), '\n'), readModelKeyFile(join(dir, 'empty')).catch((e: unknown) => e)),
      openModel('anthropic:c', { STEERLOG_ANTHROPIC_MAX_TOKENS: '0' }).catch((e: unknown) => e),
    ]);
    expect(refusals.map(isModelSpecError)).toEqual([true, true, true, true, true]);
    expect((refusals[1] as Error).message).toBe('--model-base-url and --model-key-file apply to openai: and anthropic: models only, not "echo"');
  });
});
