import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { registerConsoleOverview } from '../../../adapters/http/console-overview.js';
import { createReadPriority, type StoredReads } from '../../../adapters/http/console-stored-reads.js';
import type { LogEvent } from '../../../domain/events.js';

// The sessions list's overview folds a whole log (its chain check hashes every event) on the thread that answers the
// audit view. Its fold must give the event loop a turn before it starts and between its stretches, so the requests
// waiting on the same read (the audit view's timeline) are answered first, not after the whole fold.

const SESSION = 'overview-yield';

const events: LogEvent[] = [
  { seq: 0, id: 'e-0', type: 'session/created', time: 0, data: { sessionId: SESSION, createdAt: 0, kind: 'ordinary' } } as LogEvent,
  ...Array.from({ length: 6000 }, (_, i) => ({ seq: i + 1, id: `e-${i + 1}`, type: i % 2 === 0 ? 'turn/start' : 'turn/end', time: i + 1, data: { turn: Math.floor(i / 2) + 1, reason: { kind: 'completed' } } }) as LogEvent),
];

describe('the sessions overview of a long log', () => {
  it('does not fold it all before the event loop takes a turn, with a read priority too', async () => {
    let release!: () => void;
    const read = new Promise<void>((resolve) => (release = resolve));
    const stored = Object.assign(async () => events, {
      since: async (_id: string, from: number) => {
        await read;
        return events.slice(from);
      },
      held: () => undefined,
    }) satisfies StoredReads;
    const app = new Hono();
    registerConsoleOverview(app, stored, null, createReadPriority());
    let answered = false;
    const answer = Promise.resolve(app.request(`/api/overview?ids=${SESSION}`)).then((res) => {
      answered = true;
      return res;
    });
    // the read under way comes in; a macrotask queued at that moment (another request's turn) runs before the fold ends
    await new Promise((r) => setImmediate(r));
    release();
    const probe = await new Promise<boolean>((resolve) => setImmediate(() => resolve(answered)));
    expect(probe).toBe(false);
    const body = (await (await answer).json()) as { sessions: { events: number; turns: number }[] };
    expect(body.sessions[0]).toMatchObject({ events: 6001, turns: 3000 });
  });
});
