import type { ConversationEntry, MessageClass } from './mirror.js';

/** A message's class (prompt / steering / context), or `…` while it is not classified yet. */
export const ClassLabel = ({ cls }: { cls: MessageClass | null }) => <span class={`class-label class-${cls ?? 'pending'}`}>{cls ?? '…'}</span>;

/** Copies a message's text to the clipboard. */
export const CopyButton = ({ text }: { text: string }) => (
  <button type="button" class="copy" aria-label="Copy message" onClick={() => void navigator.clipboard?.writeText(text).catch(() => {})}>
    Copy
  </button>
);

/**
 * One durable conversation entry (a user message, an assistant message, a turn's end), as the live view and the child
 * view both show it; `details` adds the user message's time and a Copy button.
 */
export const ConversationItem = ({ entry: e, details = false }: { entry: ConversationEntry; details?: boolean }) =>
  e.kind === 'user' ? (
    <li class="bubble user" data-message-id={e.id} data-durable-message>
      <div class="meta">
        <ClassLabel cls={e.class} />
        {details ? (
          <>
            {' '}
            <time dateTime={new Date(e.time).toISOString()}>at {new Date(e.time).toLocaleTimeString()}</time> <CopyButton text={e.text} />
          </>
        ) : null}
      </div>
      <div class="text">{e.text}</div>
    </li>
  ) : e.kind === 'assistant' ? (
    <li class="bubble assistant">
      <div class="meta">assistant</div>
      <div class="text">{e.text}</div>
    </li>
  ) : (
    <li class="turn-end">
      turn {e.turn} ended: {e.reason}
    </li>
  );
