import type { Hono } from 'hono';
import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { createKeyring, openEnvelopeNow } from '../../runtime/content-opener.js';
import { HostSessionIdSchema } from '../../host/schemas.js';
import { createSessionVerifier, type SessionVerification, type SessionVerifier } from '../../formats/chain/verify-session.js';
import type { ReadPriority, StoredReads } from './console-stored-reads.js';

/** What the sessions list shows of one session beside the Host's `session.list` row. */
export interface SessionOverview {
  readonly sessionId: string;
  readonly events: number;
  /** Time of the last event (ms since the epoch); null for an empty stream. */
  readonly lastActivity: number | null;
  readonly turns: number;
  /** Whether the last turn has started and not ended. */
  readonly openTurn: boolean;
  /** How many inputs wait in next-turn and next-step after the last event (from the inbox splices). */
  readonly pending: { readonly nextTurn: number; readonly nextStep: number };
  /** Who acted in the session (`metadata.actor` of its events), in order of first appearance. */
  readonly actors: readonly string[];
  /** The start of the session's message texts (sealed content opened with the host's data keys; `[erased]` once erased), for search. */
  readonly text: string;
  /** The chain's status as `steerlog verify` gives it (without keys). */
  readonly chain: SessionVerification['status'];
}

/** How many events the overview folds between two turns of the event loop. */
const YIELD_EVERY = 2000;

/** How much message text a session keeps for search. */
const TEXT_CHARS = 4000;

interface Summary {
  read: number;
  lastActivity: number | null;
  turns: number;
  openTurn: boolean;
  nextTurn: number;
  nextStep: number;
  actors: string[];
  text: string;
  verifier: SessionVerifier;
}

const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.map((b) => (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : '')).join(' ') : '';

const step = (s: Summary, raw: RawEnvelope, e: RawEnvelope): void => {
  s.read++;
  s.lastActivity = e.time;
  // the chain is checked on the stored form; the text is read from the opened one
  s.verifier.push(raw);
  const actor = (e.metadata as { actor?: unknown } | undefined)?.actor;
  if (typeof actor === 'string' && !s.actors.includes(actor)) s.actors.push(actor);
  const d = e.data as Record<string, unknown> | null;
  if (e.type === 'turn/start') {
    s.turns++;
    s.openTurn = true;
  } else if (e.type === 'turn/end') s.openTurn = false;
  else if (e.type === 'agent/inbox/spliced' && d) {
    const inserted = Array.isArray(d.inserted) ? (d.inserted as { content?: unknown }[]) : [];
    const delta = inserted.length - (typeof d.removedCount === 'number' ? d.removedCount : 0);
    if (d.target === 'next-step') s.nextStep = Math.max(0, s.nextStep + delta);
    else s.nextTurn = Math.max(0, s.nextTurn + delta);
    for (const m of inserted) if (s.text.length < TEXT_CHARS) s.text = `${s.text} ${textOf(m.content)}`.slice(0, TEXT_CHARS);
  }
};

/**
 * `GET /api/overview?ids=<id>,<id>…` (at most 100 ids): each session's {@link SessionOverview}, folded from its
 * stored events (sealed content opened with `keys`). `stored` gives the events as stored: the console's shared read
 * ({@link StoredReads}), so a session whose audit view opens beside the sessions list is read once for both. Each
 * session's summary is kept and advanced from where the last request left it, so a refresh reads only the events
 * written since. With `priority`, its fold pauses while work that goes first runs.
 */
export const registerConsoleOverview = (app: Hono<any>, stored: StoredReads, keys: KeyStore | null = null, priority?: ReadPriority): void => {
  const summaries = new Map<string, Summary>();
  app.get('/api/overview', async (c) => {
    const ids = (c.req.query('ids') ?? '').split(',').filter(Boolean);
    if (ids.length > 100 || !ids.every((id) => HostSessionIdSchema.safeParse(id).success)) return c.json({ error: 'ids takes up to 100 session ids, comma-separated' }, 400);
    const sessions: SessionOverview[] = [];
    for (const id of ids) {
      let s = summaries.get(id);
      if (!s) summaries.set(id, (s = { read: 0, lastActivity: null, turns: 0, openTurn: false, nextTurn: 0, nextStep: 0, actors: [], text: '', verifier: createSessionVerifier(id) }));
      const keyring = keys ? createKeyring(keys) : null;
      const from = s.read;
      const events = await stored.since(id, from);
      for (let i = 0; i < events.length; i++) {
        // a long log yields to the event loop before each stretch of its fold, the first included: a macrotask, so
        // the requests waiting on the same read (the audit view's timeline) run first, and the others are served
        // meanwhile; and it waits while work that goes first runs
        if (i % YIELD_EVERY === 0 && events.length > YIELD_EVERY) {
          await new Promise((r) => setImmediate(r));
          await priority?.turn();
        }
        const raw = events[i] as RawEnvelope;
        const opened = keyring ? ((await openEnvelopeNow(raw, keyring)) as RawEnvelope) : raw;
        // another request for the session may have stepped it meanwhile: each event is stepped once
        if (from + i === s.read) step(s, raw, opened);
      }
      sessions.push({ sessionId: id, events: s.read, lastActivity: s.lastActivity, turns: s.turns, openTurn: s.openTurn, pending: { nextTurn: s.nextTurn, nextStep: s.nextStep }, actors: s.actors, text: s.text.trim(), chain: s.verifier.result().status });
    }
    return c.json({ sessions });
  });
};
