import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayCheckOutput } from '../../../adapters/cli/replay-command.js';
import { runCli as run } from './support/run-cli.js';

/**
 * `steerlog replay --check` over every session the demo produces and every session log the repository keeps
 * (docs/examples, its harness logs included): each one is reproduced, or its expected answer is stated below with the
 * reason. A log added to docs/examples without an entry here fails this test, so the claim "replay --check passes for
 * every session the demo and the examples hold" is checked over the directory, not assumed file by file.
 */

const EXAMPLES = new URL('../../../docs/examples/', import.meta.url).pathname;

/** What `replay --check --json` must answer for a kept log. */
type Expected =
  | { readonly answer: 'reproduced'; readonly hooks?: string }
  | { readonly answer: 'differs'; readonly seq: number; readonly why: string }
  | { readonly answer: 'invalid'; readonly why: string }
  | { readonly answer: 'not-replayable'; readonly why: string };

/** The hook a blocked turn needs (the deployment's pre-step policy that rejected it). */
const BLOCK_SECRETS = "export const install = (agent) => agent.on('pre-step', (c, next) => (c.messages.some((m) => m.id === 'secret') ? { kind: 'reject' } : next()));\n";

/** Every log under docs/examples, by its path there. */
const expectedOf = (path: string): Expected | undefined => {
  if (path.startsWith('dsh/')) return { answer: 'not-replayable', why: "the reference harness's own logs: event types steerlog does not write (and a child seeded with another session's log)" };
  if (path.startsWith('invalid-')) return { answer: 'invalid', why: 'invalid by design (the audit examples of refusal): a replay reproduces valid logs only' };
  const table: Record<string, Expected> = {
    'queue-steer-context.jsonl': { answer: 'reproduced' },
    'blocked-and-dropped.jsonl': { answer: 'reproduced', hooks: BLOCK_SECRETS },
    'inbox-edits.jsonl': { answer: 'reproduced' },
  };
  return table[path];
};

const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));

let dir: string;
beforeAll(() => {
  process.env['STEERLOG_ECHO_DELAY_MS'] = '0';
  dir = mkdtempSync(join(tmpdir(), 'steerlog-replay-corpus-'));
});
afterAll(() => {
  delete process.env['STEERLOG_ECHO_DELAY_MS'];
  rmSync(dir, { recursive: true, force: true });
});

describe('replay --check over every kept session', () => {
  it('every session the demo produces (plain, with signed chain heads, on JSONL and in an exported file): reproduced', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(join(dir, 'k.pem'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const store = `jsonl:${join(dir, 'store')}`;
    expect((await run('demo', '--store', store, '--session', 'plain', '--json')).code).toBe(0);
    expect((await run('demo', '--store', store, '--session', 'signed', '--key', join(dir, 'k.pem'), '--json')).code).toBe(0);
    const listed = JSON.parse((await run('sessions', '--store', store, '--json')).stdout) as { sessions: { session: string }[] } | { session: string }[];
    const sessions = (Array.isArray(listed) ? listed : listed.sessions).map((s) => s.session).sort();
    expect(sessions).toEqual(['plain', 'signed']);
    for (const session of sessions) {
      const r = await run('replay', '--store', store, session, '--check', '--json');
      expect({ session, code: r.code, out: JSON.parse(r.stdout) as ReplayCheckOutput }).toEqual({ session, code: 0, out: { format: 'steerlog-replay-check', version: 1, session, ok: true, events: expect.any(Number) } });
      writeFileSync(join(dir, `${session}.jsonl`), (await run('export', store, session)).stdout);
      expect((await run('replay', join(dir, `${session}.jsonl`), '--check')).code).toBe(0);
    }
  });

  it('every log under docs/examples answers as stated (a new log must be listed here)', async () => {
    const logs = walk(EXAMPLES)
      .filter((p) => /\.jsonl(\.zst)?$/.test(p))
      .map((p) => relative(EXAMPLES, p))
      .sort();
    expect(logs.length).toBeGreaterThan(20);
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const path of logs) {
      const want = expectedOf(path);
      const hooks = want?.answer === 'reproduced' && want.hooks !== undefined ? join(dir, `${path.replaceAll('/', '_')}.hooks.mjs`) : null;
      if (hooks) writeFileSync(hooks, (want as { hooks: string }).hooks);
      const r = await run('replay', join(EXAMPLES, path), '--check', '--json', ...(hooks ? ['--hooks', hooks] : []));
      const out = JSON.parse(r.stdout) as { ok: boolean; divergence?: { seq: number }; error?: { code: string } };
      answers[path] = out.ok ? 'reproduced' : out.divergence ? `differs at seq ${out.divergence.seq}` : `refused: ${out.error?.code} (exit ${r.code})`;
      expected[path] =
        want === undefined
          ? 'not listed in replay-corpus.test.ts'
          : want.answer === 'reproduced'
            ? 'reproduced'
            : want.answer === 'differs'
              ? `differs at seq ${want.seq}`
              : want.answer === 'invalid'
                ? 'refused: invalid-log (exit 1)'
                : 'refused: not-replayable (exit 2)';
    }
    expect(answers).toEqual(expected);
  });
});
