import { composerIntent, type ChildComposerState } from './composer-policy.js';

/** What the child composer shows and does; it holds no state of its own (the view owns the draft). */
export interface ChildComposerProps {
  readonly state: ChildComposerState;
  readonly draft: string;
  readonly onDraft: (text: string) => void;
  /** Sends the draft as a follow-up (`subagent.prompt`): always a later turn of the child. */
  readonly onSend: () => void;
  /** Interrupts the child's current turn (`subagent.interrupt`). */
  readonly onStop: () => void;
}

const READ_ONLY_TEXT = {
  'one-shot': 'This is a one-shot child: it returns one result to its parent and takes no follow-up.',
  'parent-unavailable': 'The parent session is offline on this host: a follow-up needs the live parent. Open the parent to bring it back.',
} as const;

/**
 * The composer of a child session, by the child composer rules: a continuable child keeps Send as its primary button
 * and shows a separate Stop while it runs; a running child whose parent is offline keeps only Stop (input and Send
 * disabled); a one-shot child, or an idle child whose parent is offline, gets a read-only explanation instead.
 * Enter and Cmd/Ctrl+Enter both send (a child takes no steer); Shift+Enter is a newline.
 */
export const ChildComposer = ({ state, draft, onDraft, onSend, onStop }: ChildComposerProps) => {
  if (state.kind === 'read-only') {
    return (
      <p class="composer read-only" data-read-only={state.reason} role="note">
        {READ_ONLY_TEXT[state.reason]}
      </p>
    );
  }
  const offline = state.kind === 'stop-only';
  const running = offline || state.running;
  return (
    <form
      class="composer child-composer"
      data-composer={state.kind}
      onSubmit={(e) => {
        e.preventDefault();
        if (!offline) onSend();
      }}
    >
      <label for="composer-input">Message</label>
      <textarea
        id="composer-input"
        rows={3}
        value={draft}
        disabled={offline}
        placeholder={offline ? 'parent offline: it cannot take a follow-up now; you can still stop the child' : 'Enter sends a follow-up (a later turn of the child), Shift+Enter newline'}
        onInput={(e) => onDraft((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          const intent = composerIntent(e, { running: false, busyEnter: 'queue', draftEmpty: draft.trim() === '', queuedCount: 0 });
          if (intent === 'queue' || (intent === 'none' && e.key === 'Enter' && !e.isComposing)) e.preventDefault();
          if (intent === 'queue' && !offline) onSend();
        }}
      />
      <div class="composer-actions">
        <button type="submit" class="primary" disabled={offline}>
          Send
        </button>
        {running ? (
          <button type="button" class="stop" onClick={onStop}>
            Stop
          </button>
        ) : null}
      </div>
    </form>
  );
};
