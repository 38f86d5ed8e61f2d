import * as E from 'fp-ts/lib/Either.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { InboxSplicedData, InboxTarget } from '../domain/events.js';
import { decideInbox, type InboxCommand } from '../domain/inbox/inbox-decide.js';
import { applySpliceRemoving } from '../domain/inbox/inbox-evolve.js';
import { notificationsOfRemoval } from '../domain/inbox/inbox-notifications.js';
import { nextStepItems, nextTurnItems, type InboxState } from '../domain/inbox/inbox-state.js';
import type { UserMessage } from '../domain/message.js';
import type { AgentInbox } from './agent-types.js';
import { MessageTooLargeError } from './errors.js';
import type { HookRegistry } from './hooks.js';
import type { SessionLog } from './session-log.js';

/** A message with a `sealed` sidecar (one read from an erased log): the session log's copy of it drops the sidecar. */
const carriesSealed = (m: UserMessage): boolean => 'sealed' in m;

/** The provenance a user/message carries (a claim's UUID-sized event id): counted when a message is admitted. */
const ENTERED_METADATA: EventMetadata = Object.freeze({ causationId: '00000000-0000-0000-0000-000000000000' });

/**
 * An agent's Inbox (docs/protocol.md §3): every command is decided, appended as durable splices, evolved, then notified
 * to the hooks of its agent (of type `A`: the Agent; a parameter, so this module does not import the agent's).
 */
export class Inbox<A> {
  #state: InboxState;

  /** `turn`: the turn a claim's notifications name (the running turn, else the last one). */
  constructor(
    private readonly log: SessionLog,
    private readonly hooks: HookRegistry<A>,
    state: InboxState,
    private readonly turn: () => number,
  ) {
    this.#state = state;
  }

  /** The current (persistent) inbox state. */
  get state(): InboxState {
    return this.#state;
  }

  /** One inbox command; `metadata`: the provenance its splices carry. Returns the removed items. */
  mutate(command: InboxCommand, metadata?: EventMetadata): readonly UserMessage[] {
    return this.splice(command, metadata).removed;
  }

  /** One inbox command, as `mutate`; also returns the id of the last splice it appended (none for a no-op). */
  splice(command: InboxCommand, metadata: EventMetadata | undefined): { readonly removed: readonly UserMessage[]; readonly spliceId: string | undefined } {
    const decision = decideInbox(command, this.#state);
    if (E.isLeft(decision)) throw decision.left;
    const claim = command.kind === 'claim';
    const turn = this.turn();
    const claimed = [];
    let spliceId: string | undefined;
    // an admitted message must also fit where it ends up: its user/message (caused by its claim) once it enters a step
    for (const splice of decision.right.events) {
      for (const m of splice.inserted) {
        const entered = this.log.measure('user/message', m, ENTERED_METADATA);
        if (entered > this.log.maxEventBytes) throw new MessageTooLargeError('user/message', entered, this.log.maxEventBytes);
      }
    }
    for (const decided of decision.right.events) {
      const event = this.log.append('agent/inbox/spliced', decided, metadata ? { metadata } : {});
      spliceId = event.id;
      // the inbox takes the inserted messages from the log's frozen copy, as a resumed session's fold does: one copy
      // of each message held (not the caller's beside the log's), unless the log's copy dropped a reader-side
      // `sealed` sidecar (only the sealer writes one), where the decided splice is applied as it is
      const splice = decided.inserted.some(carriesSealed) ? decided : (event.data as InboxSplicedData);
      // the removed messages come from the splice itself: reading the previous state again would walk back to it
      const applied = applySpliceRemoving(this.#state, splice);
      if (E.isLeft(applied)) throw applied.left;
      this.#state = applied.right.state;
      const notes = notificationsOfRemoval(splice, applied.right.removed, turn);
      if (claim) claimed.push(...notes);
      else this.#notify(notes);
    }
    this.#notify(claimed);
    return { removed: decision.right.removed, spliceId };
  }

  #notify(notes: ReturnType<typeof notificationsOfRemoval>): void {
    for (const n of notes) {
      if (n.type === 'agent/inbox/inserted') this.hooks.emit('inbox/inserted', n.message);
      else if (n.type === 'agent/inbox/discarded') this.hooks.emit('inbox/discarded', n.message);
      else this.hooks.emit('inbox/claimed', n.message, n.turn);
    }
  }

  /** The read-and-edit view `agent.inbox` hands out: every edit one `mutate`. */
  view(): AgentInbox {
    const self = this;
    return {
      get nextTurn() {
        return nextTurnItems(self.#state);
      },
      get nextStep() {
        return nextStepItems(self.#state);
      },
      get state() {
        return self.#state;
      },
      splice: (target: InboxTarget, start: number, ...rest: [deleteCount?: number, ...insert: UserMessage[]]) => {
        const [deleteCount, ...insert] = rest;
        // the domain's command reads an absent deleteCount as "to the end": pass one only when the caller omitted it
        const count = rest.length === 0 ? undefined : (deleteCount ?? 0);
        return [...this.mutate({ kind: 'splice', target, start, deleteCount: count, insert })];
      },
      append: (target, message) => void this.mutate({ kind: 'append', target, message }),
      prepend: (target, message) => void this.mutate({ kind: 'prepend', target, message }),
      replace: (id, message) => this.mutate({ kind: 'replace', id, message }).length > 0,
      remove: (id) => this.mutate({ kind: 'remove', id }).length > 0,
      clear: () => [...this.mutate({ kind: 'clear' })],
    };
  }
}
