/** What a key press in the composer does. */
export type ComposerIntent = 'none' | 'newline' | 'queue' | 'steer' | 'steer-all';

/** The key press, as the composer sees it. */
export interface ComposerKey {
  readonly key: string;
  readonly shiftKey: boolean;
  readonly metaKey: boolean;
  readonly ctrlKey: boolean;
  /** An IME composition is in progress (Enter confirms the composition, it never sends). */
  readonly isComposing: boolean;
}

/** The session and draft the key lands on. */
export interface ComposerContext {
  readonly running: boolean;
  /** What plain Enter does while running. @defaultValue 'queue' */
  readonly busyEnter: 'queue' | 'steer';
  readonly draftEmpty: boolean;
  /** Queued rows (placement `queued`) in the mirror. */
  readonly queuedCount: number;
}

/**
 * The composer policy: idle → Enter and Cmd/Ctrl+Enter both queue; running → Enter does the busy-Enter preference
 * and Cmd/Ctrl+Enter the opposite; Shift+Enter is a newline; an empty draft: plain Enter does nothing, and
 * Cmd/Ctrl+Enter while running with at least one queued row steers every queued row ("steer all").
 */
export const composerIntent = (key: ComposerKey, ctx: ComposerContext): ComposerIntent => {
  if (key.key !== 'Enter' || key.isComposing) return 'none';
  if (key.shiftKey) return 'newline';
  const modified = key.metaKey || key.ctrlKey;
  if (ctx.draftEmpty) return modified && ctx.running && ctx.queuedCount > 0 ? 'steer-all' : 'none';
  if (!ctx.running) return 'queue';
  const opposite = ctx.busyEnter === 'queue' ? 'steer' : 'queue';
  return modified ? opposite : ctx.busyEnter;
};

/** What the composer of a child session offers (the parent's user reaches a child only through the subagent routes). */
export type ChildComposerState =
  /** A continuable child, parent live: Send stays the primary button; a separate Stop appears while the child runs. */
  | { readonly kind: 'continuable'; readonly running: boolean }
  /** A running continuable child whose parent is offline: input and Send disabled, Stop enabled. */
  | { readonly kind: 'stop-only' }
  /** No composer at all: a one-shot child (it returns one result and takes no follow-up), or an idle child whose parent is offline. */
  | { readonly kind: 'read-only'; readonly reason: 'one-shot' | 'parent-unavailable' };

/**
 * The composer rules of a child session: one-shot → read-only, never Stop; continuable with its parent live → Send
 * plus a separate Stop while running; continuable with its parent offline → Stop only while running, read-only when
 * not (a follow-up needs the live parent; an interrupt does not).
 */
export const childComposerState = (child: { readonly mode: 'continuable' | 'one-shot'; readonly running: boolean }, parentAvailable: boolean): ChildComposerState => {
  if (child.mode === 'one-shot') return { kind: 'read-only', reason: 'one-shot' };
  if (parentAvailable) return { kind: 'continuable', running: child.running };
  return child.running ? { kind: 'stop-only' } : { kind: 'read-only', reason: 'parent-unavailable' };
};
