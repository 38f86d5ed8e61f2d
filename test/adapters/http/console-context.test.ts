import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contextCommand } from '../../../adapters/cli/context-command.js';
import { demoCommand } from '../../../adapters/cli/demo-command.js';
import { openStore } from '../../../adapters/store/open-store.js';
import type { SessionTimeline } from '../../../audit/session-timeline.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { startTestHost, type TestHost } from './http-support.js';

// The console's step request (select a step in the audit view → its request) is `steerlog context --json`.

const run = async (command: typeof contextCommand, argv: string[]): Promise<{ code: number; out: string }> => {
  let out = '';
  const code = await command(argv, { stdout: { write: (c: string) => (out += c) }, stderr: { write: () => true } });
  return { code, out };
};

let host: TestHost | null = null;
let store: EventStore | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await host?.close();
  host = null;
  await store?.close();
  store = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('GET /api/context/<id>?step=<turn>.<step>', () => {
  it("answers exactly what `steerlog context --store … --step … --json` prints, for every step of the demo session", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-console-context-'));
    dirs.push(dir);
    const spec = `jsonl:${dir}`;
    expect((await run(demoCommand, ['--store', spec, '--session', 'demo-ctx', '--json'])).code).toBe(0);
    store = await openStore(spec);
    host = await startTestHost({ store });
    const timeline = (await (await fetch(`${host.url}/api/timeline/demo-ctx`)).json()) as SessionTimeline;
    const steps = timeline.turns.flatMap((t) => t.steps.map((s) => `${t.turn}.${s.step}`));
    expect(steps.length).toBeGreaterThanOrEqual(3);
    for (const step of steps) {
      const res = await fetch(`${host.url}/api/context/demo-ctx?step=${step}`);
      expect(res.status, step).toBe(200);
      const cli = await run(contextCommand, ['--store', spec, 'demo-ctx', '--step', step, '--json']);
      expect(cli.code, step).toBe(0);
      const answer = (await res.json()) as { messages: unknown[]; header: unknown };
      expect(answer, step).toEqual(JSON.parse(cli.out));
      expect(answer.messages.length, step).toBeGreaterThan(0);
      expect(answer.header, step).not.toBeNull();
    }
    // refusals: a step the log does not have (the command's exit 2), a malformed step, no such session
    const missing = await fetch(`${host.url}/api/context/demo-ctx?step=99.1`);
    expect([missing.status, await missing.json()]).toEqual([404, { error: 'step-not-found', sessionId: 'demo-ctx', message: 'the log has no step 99.1' }]);
    await expect(run(contextCommand, ['--store', spec, 'demo-ctx', '--step', '99.1', '--json'])).rejects.toThrow('the log has no step 99.1'); // a usage failure: exit 2
    expect((await fetch(`${host.url}/api/context/demo-ctx?step=1`)).status).toBe(400);
    expect((await fetch(`${host.url}/api/context/nobody?step=1.1`)).status).toBe(404);
  });
});
