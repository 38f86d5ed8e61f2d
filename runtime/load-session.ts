import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent, AssistantBlock } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import { foldSession, type SessionState } from '../domain/session-fold.js';
import type { EventStore } from './ports/event-store.js';
import { envelopeOfRecorded } from './ports/recorded-envelope.js';
import { RuntimeError } from './errors.js';
import { createKeyring, openEnvelope } from './content-opener.js';
import type { SealerSeed } from './content-sealer.js';
import type { KeyStore } from './ports/key-store.js';
import { sealedOf } from '../domain/sealed-content.js';

/** A stored session, parsed and folded. */
export interface LoadedSession {
  /** The events, sealed content opened (see content-opener.ts): readable, `[erased]` or `[encrypted]`. */
  readonly events: readonly LogEvent[];
  readonly state: SessionState;
  /** The session's keys that are still active, and the key of each admitted message (to keep sealing with them). */
  readonly seed: SealerSeed;
}

/**
 * Reads a session stream from the store, parsing every event (seq = stream revision) and folding it. Sealed content
 * is opened with the keys of `keys` when given; without it (or when a key is gone) it reads `[encrypted]` (`[erased]`).
 */
export const loadSession = async (store: EventStore, sessionId: string, keys: KeyStore | null = null): Promise<LoadedSession> => {
  const events: LogEvent[] = [];
  const keyring = createKeyring(keys);
  const messageKeys = new Map<string, string>();
  for await (const r of store.read(sessionId)) {
    const raw = envelopeOfRecorded(r);
    if (raw.type === 'agent/inbox/spliced') {
      const inserted = (raw.data as { inserted?: unknown }).inserted;
      const sealed = sealedOf(raw.type, raw.data);
      if (Array.isArray(inserted) && sealed.length === inserted.length) {
        inserted.forEach((m, i) => messageKeys.set((m as { id: string }).id, sealed[i]!.keyId));
      }
    }
    const parsed = parseEvent(await openEnvelope(raw, keyring), { expectedSeq: events.length });
    if (E.isLeft(parsed)) throw new RuntimeError('session-corrupt', `session ${sessionId}: ${parsed.left.message}`, { cause: parsed.left });
    events.push(parsed.right);
  }
  if (events.length === 0) throw new RuntimeError('session-not-found', `no session ${sessionId} in the store`);
  const { state, error } = foldSession(events);
  if (error) throw new RuntimeError('session-corrupt', `session ${sessionId}: ${error.message}`, { cause: error });
  const active: SealerSeed['keys'][number][] = [];
  for (const [keyId, found] of keyring.seen) {
    const k = found === 'active' ? await keyring.lookup(keyId) : undefined;
    if (k?.state === 'active' && k.session === sessionId) active.push({ keyId, key: k.key, ...(k.actor !== undefined ? { actor: k.actor } : {}) });
  }
  return { events, state, seed: { keys: active, messageKeys } };
};

/** A closer that crash repair appends (docs/protocol.md §11). */
export type RepairCloser =
  | { readonly type: 'tool/result'; readonly data: { turn: number; step: number; message: { role: 'tool'; callId: string; content: { type: 'text'; text: string }[]; isError: true }; error: { name: string; code: string } } }
  | { readonly type: 'step/end'; readonly data: { turn: number; step: number } }
  | { readonly type: 'turn/end'; readonly data: { turn: number; reason: { kind: 'interrupted' } } };

/**
 * The closers for a log whose tail turn is open (a crash): an error tool/result for every tool call of the open step
 * without a result (TOOL_OUTCOME_UNKNOWN if its tool/call was recorded, else TOOL_NOT_STARTED), then step/end if a
 * step is open, then turn/end {interrupted}. Pure; empty when no turn is open.
 */
export const repairClosers = (events: readonly LogEvent[], state: SessionState): RepairCloser[] => {
  const open = state.turns.openTurn;
  if (!open) return [];
  const out: RepairCloser[] = [];
  const step = state.turns.openStep;
  if (step !== null) {
    const inStep = events.filter((e) => e.seq >= open.startSeq && (e.data as { turn?: number; step?: number })?.turn === open.turn && (e.data as { step?: number }).step === step);
    const called = new Set(inStep.filter((e) => e.type === 'tool/call').map((e) => (e.data as { callId: string }).callId));
    const resulted = new Set(inStep.filter((e) => e.type === 'tool/result').map((e) => (e.data as { message: { callId: string } }).message.callId));
    const requested = inStep
      .filter((e) => e.type === 'assistant/message')
      .flatMap((e) => (e.data as { message: { content: AssistantBlock[] } }).message.content)
      .filter((b): b is Extract<AssistantBlock, { type: 'tool-call' }> => b.type === 'tool-call')
      .map((b) => b.callId);
    for (const callId of [...new Set([...requested, ...called])]) {
      if (resulted.has(callId)) continue;
      const code = called.has(callId) ? 'TOOL_OUTCOME_UNKNOWN' : 'TOOL_NOT_STARTED';
      out.push({
        type: 'tool/result',
        data: {
          turn: open.turn,
          step,
          message: { role: 'tool', callId, content: [{ type: 'text', text: `interrupted: ${code}` }], isError: true },
          error: { name: 'Interrupted', code },
        },
      });
    }
    out.push({ type: 'step/end', data: { turn: open.turn, step } });
  }
  out.push({ type: 'turn/end', data: { turn: open.turn, reason: { kind: 'interrupted' } } });
  return out;
};
