import * as E from 'fp-ts/lib/Either.js';
import type { EventId, MessageId } from '../domain/brand.js';
import type { EventDataByType, EventType, InboxNotification, SessionEvent, TurnEndReason } from '../domain/events.js';
import { decideInbox, type InboxCommand, type InboxDecision } from '../domain/inbox/inbox-decide.js';
import { evolveInbox } from '../domain/inbox/inbox-evolve.js';
import { notificationsOfSplice } from '../domain/inbox/inbox-notifications.js';
import { initialInboxState, nextStepItems, nextTurnItems, type InboxState } from '../domain/inbox/inbox-state.js';
import { createUserMessage, type MessageSource, type UserMessage } from '../domain/message.js';

/** Deterministic UUIDs: 00000000-0000-4000-8000-<n as 12 hex digits>. */
export const uuidAt = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** A message with a readable id, for tests and examples. */
export const msg = (id: string, text = id, source: MessageSource = { kind: 'user' }): UserMessage =>
  createUserMessage(text, source, { newId: () => id as MessageId });
/** A context message from a plugin, with a readable id. */
export const ctx = (id: string, plugin = 'test-plugin'): UserMessage => msg(id, id, { kind: 'plugin', plugin });

/**
 * Builds a valid session log the way the driver would, through the pure deciders: every inbox change goes
 * decide → events → evolve. Ids and clock are deterministic, so a log is reproducible byte for byte.
 */
export class LogBuilder {
  readonly events: SessionEvent[] = [];
  readonly notifications: InboxNotification[] = [];
  inbox: InboxState = initialInboxState();
  private turn = 0;
  private step = 0;
  private time: number;

  constructor(readonly sessionId = 'session-1', startTime = 1_700_000_000_000, kind: 'ordinary' | 'continuable' | 'one-shot' = 'ordinary') {
    this.time = startTime;
    this.add('session/created', { sessionId, createdAt: startTime, kind });
  }

  add<T extends EventType>(type: T, data: EventDataByType[T]): this {
    const seq = this.events.length;
    if (type === 'turn/start') {
      this.turn = (data as { turn: number }).turn;
      this.step = 0;
    }
    if (type === 'step/start') this.step = (data as { step: number }).step;
    this.events.push({ seq, id: uuidAt(seq + 1) as EventId, time: this.time++, type, data } as SessionEvent);
    return this;
  }

  /** Lets `ms` milliseconds pass before the next event (the clock otherwise ticks 1 ms per event). */
  wait(ms: number): this {
    this.time += ms;
    return this;
  }

  /** Runs an inbox command; throws on refusal. */
  do(command: InboxCommand): InboxDecision {
    const decision = decideInbox(command, this.inbox);
    if (E.isLeft(decision)) throw decision.left;
    for (const splice of decision.right.events) {
      this.notifications.push(...notificationsOfSplice(this.inbox, splice, this.turn));
      this.add('agent/inbox/spliced', splice);
      this.inbox = evolveInbox(this.inbox, splice);
    }
    return decision.right;
  }

  followup(m: UserMessage): this {
    this.do({ kind: 'append', target: 'next-turn', message: m });
    return this;
  }
  steer(m: UserMessage): this {
    this.do({ kind: 'append', target: 'next-step', message: m });
    return this;
  }

  turnStart(): this {
    return this.add('turn/start', { turn: this.turn + 1 });
  }
  /** Claims for the next step (next-turn at a turn's first boundary) and enters the batch as a step. */
  claimAndStep(text = 'ok'): UserMessage[] {
    const batch = this.do({ kind: 'claim', target: this.step === 0 ? 'next-turn' : 'next-step' }).removed as UserMessage[];
    if (batch.length > 0) this.stepWith(batch, text);
    return batch;
  }
  claim(): UserMessage[] {
    return this.do({ kind: 'claim', target: this.step === 0 ? 'next-turn' : 'next-step' }).removed as UserMessage[];
  }
  stepWith(messages: readonly UserMessage[], text = 'ok'): this {
    this.add('step/start', { turn: this.turn, step: this.step + 1 });
    for (const m of messages) this.add('user/message', m);
    this.add('assistant/message', { turn: this.turn, step: this.step, message: { role: 'assistant', content: [{ type: 'text', text }] } });
    return this.add('step/end', { turn: this.turn, step: this.step });
  }
  turnEnd(reason: TurnEndReason = { kind: 'completed' }): this {
    return this.add('turn/end', { turn: this.turn, reason });
  }
  /** One whole ordinary turn: start, claim, one step, end. */
  runTurn(reason: TurnEndReason = { kind: 'completed' }): this {
    this.turnStart();
    this.claimAndStep();
    return this.turnEnd(reason);
  }

  get lists(): { nextTurn: string[]; nextStep: string[] } {
    return { nextTurn: nextTurnItems(this.inbox).map((m) => m.id), nextStep: nextStepItems(this.inbox).map((m) => m.id) };
  }
  toJsonl(): string {
    return this.events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  }
}
