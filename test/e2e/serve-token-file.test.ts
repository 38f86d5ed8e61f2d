import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from '../../host/schemas.js';
import { runCli } from '../adapters/cli/support/run-cli.js';
import { removeDir, startServe, type ServeProcess } from './support/serve-process.js';

// The "done when": `steerlog serve --token-file` with two named tokens; prompts from each show their own
// actor in `audit` (json and text), `why` and `sessions`. (The console's view of the same: console-actors.browser.ts.)

const TOKENS = { alice: 'alice-e2e-token-0123456789', bob: 'bob-e2e-token-0123456789ab' };
const as = (who: keyof typeof TOKENS) => ({ headers: { authorization: `Bearer ${TOKENS[who]}` } });
const ok = <T = Record<string, unknown>>(r: ServerResponse): T => {
  if (!r.result.ok) throw new Error(`expected ok: ${JSON.stringify(r.result.error)}`);
  return r.result.value as T;
};
const t = (s: string) => [{ type: 'text', text: s }];

describe('steerlog serve --token-file: each token is its own actor', () => {
  let dir: string;
  let files: string;
  let serve: ServeProcess;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steerlog-token-file-store-'));
    files = mkdtempSync(join(tmpdir(), 'steerlog-token-file-'));
    writeFileSync(join(files, 'tokens'), `# two operators\nalice:${TOKENS.alice}\nbob:${TOKENS.bob}\n`, { mode: 0o600 });
    serve = await startServe(`jsonl:${dir}`, ['--token-file', join(files, 'tokens')]);
  });
  afterAll(async () => {
    await serve?.stop();
    if (serve) removeDir(serve.gateDir);
    removeDir(dir);
    removeDir(files);
  });

  it('prompts from alice and from bob show their own actor in audit, why and sessions; a wrong token gets 401', async () => {
    const whoami = async (who: keyof typeof TOKENS) => (await (await fetch(`${serve.url}/api/whoami`, as(who))).json()) as { principal: string };
    expect((await whoami('alice')).principal).toBe('alice');
    expect((await whoami('bob')).principal).toBe('bob');
    expect((await fetch(`${serve.url}/api/session.list`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.alice}x`, 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);

    ok(await serve.rpc('session.create', { sessionId: 'shared' }, as('alice')));
    ok(await serve.rpc('session.prompt', { sessionId: 'shared', mode: 'queue', content: t('[hold:a] from alice'), messageId: 'from-alice' }, as('alice')));
    await serve.started('a');
    ok(await serve.rpc('session.prompt', { sessionId: 'shared', mode: 'queue', content: t('from bob'), messageId: 'from-bob', durable: true }, as('bob')));
    serve.release('a');
    ok(await serve.rpc('session.cancel', { sessionId: 'shared' }, as('bob')));
    expect(await serve.stop()).toBe(0);

    const spec = `jsonl:${dir}`;
    const audit = JSON.parse((await runCli('audit', '--store', spec, 'shared', '--json')).stdout) as {
      messages: { id: string; fate: { admitted: { actor: string | null; actorKind: string | null } } }[];
      actions: { kind: string; id: string | null; actor: string | null }[];
    };
    const admittedBy = Object.fromEntries(audit.messages.map((m) => [m.id, [m.fate.admitted.actor, m.fate.admitted.actorKind]]));
    expect(admittedBy).toEqual({ 'from-alice': ['alice', 'user'], 'from-bob': ['bob', 'user'] });
    expect(audit.actions.filter((a) => a.kind === 'created' || a.kind === 'admitted').map((a) => [a.kind, a.id, a.actor])).toEqual([
      ['created', null, 'alice'],
      ['admitted', 'from-alice', 'alice'],
      ['admitted', 'from-bob', 'bob'],
    ]);
    const text = (await runCli('audit', '--store', spec, 'shared')).stdout;
    expect(text).toContain('admitted  from-alice  by alice (user)');
    expect(text).toContain('admitted  from-bob  by bob (user)');
    for (const [id, who] of [['from-alice', 'alice'], ['from-bob', 'bob']] as const) {
      const why = JSON.parse((await runCli('why', '--store', spec, 'shared', id, '--json')).stdout) as { fate: { admitted: { actor: string } }; facts: { kind: string; metadata?: { actor?: string } }[] };
      expect(why.fate.admitted.actor).toBe(who);
      expect(why.facts.find((f) => f.kind === 'admitted')!.metadata).toMatchObject({ actor: who, actorKind: 'user' });
      expect((await runCli('why', '--store', spec, 'shared', id)).stdout).toContain(`by ${who} (user)`);
    }
    const sessions = JSON.parse((await runCli('sessions', '--store', spec, '--json')).stdout) as { sessions: { session: string; createdBy: string; actors: string[] }[] };
    expect(sessions.sessions.find((s) => s.session === 'shared')).toMatchObject({ createdBy: 'alice', actors: ['alice', 'bob'] });
  });
});
