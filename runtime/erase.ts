import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import { RuntimeError } from './errors.js';
import type { Logger } from './logger.js';
import type { Clock, IdSource } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { HeadSigner } from './ports/head-signer.js';
import type { KeySelector, KeyStore } from './ports/key-store.js';
import { envelopeOfRecorded } from './ports/recorded-envelope.js';
import { SessionLog } from './session-log.js';

/** Options of {@link eraseKeys}. */
export interface EraseOptions {
  readonly store: EventStore;
  readonly keys: KeyStore;
  /** Whose keys: one session's (all of them, its actors' too), or one actor's (in every session). */
  readonly selector: KeySelector;
  /** Who erases: the `actor` of each `session/erased` event (its `actorKind` is `user`). @defaultValue none */
  readonly by?: string;
  /** More provenance for the `session/erased` events (e.g. a ticket as `correlationId`). @defaultValue none */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly logger: Logger;
  /** Signs the new chain head after each `session/erased`, as the runtime does at a checkpoint. @defaultValue none */
  readonly signer?: HeadSigner;
}

/** What one erase did to one session. */
export interface ErasedSession {
  readonly session: string;
  /** The keys recorded as erased by this run's `session/erased` event (empty when an earlier run recorded them all). */
  readonly keyIds: readonly string[];
  /** seq of the `session/erased` event appended, or null when none was needed. */
  readonly seq: number | null;
  /** The session has no stream in this store (its keys are destroyed all the same). */
  readonly missing: boolean;
}

/** What {@link eraseKeys} did. */
export interface EraseResult {
  /** Keys destroyed by this run. */
  readonly destroyed: readonly string[];
  /** Keys the selector names that an earlier run had destroyed already. */
  readonly alreadyDestroyed: readonly string[];
  readonly sessions: readonly ErasedSession[];
}

/**
 * Crypto-shredding: destroys every data key the selector names, then appends to each affected session a
 * `session/erased` event (`ignorable: true`; who in `metadata.actor`, when in `time`) naming the keys it had not
 * recorded yet. Destroying comes first, so an interruption never leaves a record of an erasure that did not happen;
 * running it again completes the records. The append continues the session's chain with the expected revision,
 * so a session still being written elsewhere is fenced there (its writer stops) rather than forked.
 */
export const eraseKeys = async (options: EraseOptions): Promise<EraseResult> => {
  const { store, keys, selector } = options;
  const before = await keys.keysOf(selector);
  const destroyed = await keys.destroy(selector, options.clock.now());
  const fresh = new Set(destroyed.map((k) => k.keyId));
  const bySession = new Map<string, string[]>();
  for (const k of [...before, ...destroyed]) {
    const list = bySession.get(k.session) ?? [];
    if (!list.includes(k.keyId)) list.push(k.keyId);
    bySession.set(k.session, list);
  }
  const sessions: ErasedSession[] = [];
  for (const [session, keyIds] of bySession) sessions.push(await recordErasure(options, session, keyIds));
  return {
    destroyed: [...fresh],
    alreadyDestroyed: before.filter((k) => k.state === 'destroyed').map((k) => k.keyId),
    sessions,
  };
};

const recordErasure = async (options: EraseOptions, session: string, keyIds: readonly string[]): Promise<ErasedSession> => {
  const events: LogEvent[] = [];
  const recorded = new Set<string>();
  for await (const r of options.store.read(session)) {
    const parsed = parseEvent(envelopeOfRecorded(r), { expectedSeq: events.length });
    if (E.isLeft(parsed)) throw new RuntimeError('session-corrupt', `session ${session}: ${parsed.left.message}`, { cause: parsed.left });
    const e = parsed.right;
    if (e.type === 'session/erased') for (const id of (e.data as { keyIds: readonly string[] }).keyIds) recorded.add(id);
    events.push(e);
  }
  if (events.length === 0) return { session, keyIds: [], seq: null, missing: true };
  const todo = keyIds.filter((id) => !recorded.has(id));
  if (todo.length === 0) return { session, keyIds: [], seq: null, missing: false };
  const log = new SessionLog({
    store: options.store,
    stream: session,
    clock: options.clock,
    ids: options.ids,
    logger: options.logger,
    initial: events,
    writeBatchDelayMs: 0,
    ...(options.signer ? { signer: options.signer } : {}),
  });
  const scope = 'session' in options.selector ? ('session' as const) : ('actor' as const);
  const subject = 'session' in options.selector ? options.selector.session : options.selector.actor;
  const metadata = { ...options.metadata, ...(options.by !== undefined ? { actor: options.by, actorKind: 'user' as const } : {}) };
  const event = log.appendAny('session/erased', { scope, subject, keyIds: todo }, { ignorable: true, ...(Object.keys(metadata).length > 0 ? { metadata } : {}) });
  await log.close();
  return { session, keyIds: todo, seq: event.seq, missing: false };
};
