import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ed25519Signer, ed25519Verifier } from '../../../formats/chain/ed25519.js';
import { storeConsolePorts } from '../../../adapters/http/console-ports.js';
import type { ConsoleChain } from '../../../adapters/http/console-reads.js';
import { openStore } from '../../../adapters/store/open-store.js';
import type { SessionTimeline } from '../../../audit/session-timeline.js';
import { createRuntime } from '../../../runtime/runtime.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { editStreamFile } from '../../support/edit-stream-file.js';
import { testKeys } from '../../support/chained-session.js';
import { cliJson, getJson, startTestHost, type TestHost } from './http-support.js';

// The console's chain panel and report export: the same answers as `steerlog verify --json` and `audit --json`.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let host: TestHost | null = null;
const stores: EventStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await host?.close();
  host = null;
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the console chain answer is `steerlog verify --json`', () => {
  it('verified with signed heads, then broken at the edited seq with the same reason; the export is `audit --json`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-chain-'));
    dirs.push(dir);
    const { privateKey, publicKey } = testKeys();
    const pem = join(dir, 'pub.pem');
    writeFileSync(pem, publicKey.export({ type: 'spki', format: 'pem' }));
    const verifier = ed25519Verifier(publicKey);
    const open = async () => {
      const store = await openStore(`jsonl:${dir}`);
      stores.push(store);
      return startTestHost({
        store,
        runtime: (o) => createRuntime({ ...o, signer: ed25519Signer(privateKey) }),
        http: { console: { ports: storeConsolePorts(store, { verifiers: [verifier] }) } },
      });
    };
    host = await open();
    host.model.releaseAll();
    expect((await host.rpc('session.create', { sessionId: 'chain-1' })).result.ok).toBe(true);
    for (const text of ['first prompt', 'second prompt']) {
      expect((await host.rpc('session.prompt', { sessionId: 'chain-1', mode: 'queue', content: [{ type: 'text', text }], durable: true })).result.ok).toBe(true);
    }
    const agent = host.host.live.get('chain-1')!.agent;
    await agent.whenIdle();
    await agent.checkpoint();
    const chain = await getJson<ConsoleChain>(host, '/api/chain/chain-1');
    const exported = await getJson<unknown>(host, '/api/export/chain-1');
    const timeline = await getJson<SessionTimeline>(host, '/api/timeline/chain-1');
    expect(timeline.inputs.map((i) => [i.text, i.class, i.actor])).toEqual([
      ['first prompt', 'prompt', 'local'],
      ['second prompt', 'prompt', 'local'],
    ]);
    await host.close();
    host = null;
    for (const s of stores.splice(0)) await s.close();

    const verified = await cliJson('verify', '--store', `jsonl:${dir}`, 'chain-1', '--pubkey', pem, '--json');
    expect(chain.verification).toEqual((verified.sessions as unknown[])[0]);
    expect(chain.verification).toMatchObject({ status: 'verified', ok: true, signatures: { problem: null } });
    expect(chain.publicKeyIds).toEqual([verifier.keyId]);
    expect(chain.heads.length).toBeGreaterThan(0);
    expect(chain.heads.every((h) => h.keyId === verifier.keyId && h.keyConfigured)).toBe(true);
    const audited = await cliJson('audit', '--store', `jsonl:${dir}`, 'chain-1', '--json');
    expect(exported).toEqual(audited);

    const seq = await editStreamFile(dir, 'chain-1', 'second prompt', 'forged prompt');
    host = await open();
    const broken = await getJson<ConsoleChain>(host, '/api/chain/chain-1');
    const listed = await host.rpc('session.list', {});
    expect(listed.result.ok).toBe(true); // the store's index was rebuilt over the edit: the host lists the session
    const overview = await getJson<{ sessions: { chain: string }[] }>(host, '/api/overview?ids=chain-1');
    expect(overview.sessions.map((o) => o.chain)).toEqual(['broken']);
    await host.close();
    host = null;
    for (const s of stores.splice(0)) await s.close();
    const cliBroken = await cliJson('verify', '--store', `jsonl:${dir}`, 'chain-1', '--pubkey', pem, '--json');
    expect(broken.verification).toEqual((cliBroken.sessions as unknown[])[0]);
    expect(broken.verification).toMatchObject({ status: 'broken', ok: false, break: { kind: 'hash-mismatch', seq } });
  });

  it('a log written before the chain is unchained, as verify says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-unchained-'));
    dirs.push(dir);
    const store = await openStore(`jsonl:${dir}`);
    stores.push(store);
    const lines = readFileSync(join(ROOT, 'docs/examples/queue-steer-context.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; type: string; data: unknown; time: number });
    await store.append('session-queue-steer-context', lines.map((e) => ({ id: e.id, type: e.type, data: e.data, time: e.time })), 'no_stream');
    host = await startTestHost({ store });
    const chain = await getJson<ConsoleChain>(host, '/api/chain/session-queue-steer-context');
    expect((await fetch(`${host.url}/api/chain/nope`)).status).toBe(404);
    expect((await fetch(`${host.url}/api/chain/session-queue-steer-context?anchor=zz`)).status).toBe(400);
    await host.close();
    host = null;
    for (const s of stores.splice(0)) await s.close();
    const verified = await cliJson('verify', '--store', `jsonl:${dir}`, 'session-queue-steer-context', '--json');
    expect(chain.verification).toEqual((verified.sessions as unknown[])[0]);
    expect(chain.verification.status).toBe('unchained');
    expect(chain).toMatchObject({ publicKeyIds: [], heads: [], headCount: 0 });
  });
});
