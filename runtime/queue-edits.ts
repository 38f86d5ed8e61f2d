import * as E from 'fp-ts/lib/Either.js';
import * as L from '../domain/inbox/pending-list.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { UserMessage } from '../domain/message.js';
import { decideQueueEdit } from '../domain/queue-edit.js';
import type { InputOptions, QueueEdits } from './agent-types.js';
import { isMessageTooLargeError, MessageTooLargeError } from './errors.js';
import type { Inbox } from './inbox.js';
import type { SessionLog } from './session-log.js';

/** What queue edits need from their agent (of type `A`, whose hooks its Inbox notifies). */
export interface QueueEditsPort<A> {
  readonly inbox: Inbox<A>;
  readonly log: SessionLog;
  /** The agent's public status now (a strict steer needs a running agent). */
  readonly status: () => 'idle' | 'running';
  /** Steers the moved message into next-step, as `agent.steer`, with this provenance. */
  readonly steer: (message: UserMessage, metadata: EventMetadata | undefined) => void;
  /** The metadata an edit records: its options' own, with the actor (else the runtime's default actor). */
  readonly provenance: (options: InputOptions, where: string) => EventMetadata | undefined;
}

/** Queue edits by message id (docs/protocol.md §10), with typed refusals instead of throws: claim wins every race. */
export const queueEdits = <A>(port: QueueEditsPort<A>): QueueEdits => {
  const { inbox, log } = port;
  return {
    edit: (id, content, options = {}) => {
      const metadata = port.provenance(options, 'queue.edit(options)');
      const decided = decideQueueEdit(inbox.state, port.status(), { kind: 'edit', id, content });
      if (E.isLeft(decided)) return decided;
      try {
        inbox.mutate(decided.right.command, metadata);
      } catch (e) {
        // the edited message is larger than the store accepts: refused like any other edit, nothing logged
        if (isMessageTooLargeError(e)) return E.left(e);
        throw e;
      }
      return E.right({ accepted: true });
    },
    remove: (id, options = {}) => {
      const metadata = port.provenance(options, 'queue.remove(options)');
      const decided = decideQueueEdit(inbox.state, port.status(), { kind: 'remove', id });
      if (E.isLeft(decided)) return decided;
      inbox.mutate(decided.right.command, metadata);
      return E.right({ accepted: true });
    },
    steer: (id, options = {}) => {
      const metadata = port.provenance(options, 'queue.steer(options)');
      const decided = decideQueueEdit(inbox.state, port.status(), { kind: 'steer', id });
      if (E.isLeft(decided)) return decided;
      // the message moves as it is: refuse before the removal if its re-insertion could not be logged
      const size = log.measure('agent/inbox/spliced', { target: 'next-step', start: L.size(inbox.state.nextStep), inserted: [decided.right.message] });
      if (size > log.maxEventBytes) return E.left(new MessageTooLargeError('agent/inbox/spliced', size, log.maxEventBytes));
      inbox.mutate(decided.right.command, metadata);
      port.steer(decided.right.message, metadata);
      return E.right({ accepted: true });
    },
  };
};
