import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childComposerState, composerIntent, type ComposerContext, type ComposerKey } from '../../../adapters/web/src/composer-policy.js';
import { treeOrder } from '../../../adapters/web/src/session-tree.js';

const key = (k: Partial<ComposerKey> = {}): ComposerKey => ({ key: 'Enter', shiftKey: false, metaKey: false, ctrlKey: false, isComposing: false, ...k });
const ctx = (c: Partial<ComposerContext> = {}): ComposerContext => ({ running: false, busyEnter: 'queue', draftEmpty: false, queuedCount: 0, ...c });

describe('the composer policy', () => {
  it('idle: Enter and Cmd/Ctrl+Enter both queue; Shift+Enter is a newline', () => {
    expect(composerIntent(key(), ctx())).toBe('queue');
    expect(composerIntent(key({ metaKey: true }), ctx())).toBe('queue');
    expect(composerIntent(key({ ctrlKey: true }), ctx())).toBe('queue');
    expect(composerIntent(key({ shiftKey: true }), ctx())).toBe('newline');
  });

  it('running: Enter is the busy-Enter preference, Cmd/Ctrl+Enter the opposite', () => {
    expect(composerIntent(key(), ctx({ running: true }))).toBe('queue');
    expect(composerIntent(key({ metaKey: true }), ctx({ running: true }))).toBe('steer');
    expect(composerIntent(key(), ctx({ running: true, busyEnter: 'steer' }))).toBe('steer');
    expect(composerIntent(key({ ctrlKey: true }), ctx({ running: true, busyEnter: 'steer' }))).toBe('queue');
  });

  it('empty draft: plain Enter does nothing; Cmd/Ctrl+Enter steers all only while running with a queued row', () => {
    expect(composerIntent(key(), ctx({ draftEmpty: true, running: true, queuedCount: 2 }))).toBe('none');
    expect(composerIntent(key({ metaKey: true }), ctx({ draftEmpty: true, running: true, queuedCount: 2 }))).toBe('steer-all');
    expect(composerIntent(key({ metaKey: true }), ctx({ draftEmpty: true, running: true, queuedCount: 0 }))).toBe('none');
    expect(composerIntent(key({ metaKey: true }), ctx({ draftEmpty: true, running: false, queuedCount: 2 }))).toBe('none');
  });

  it('never sends during an IME composition or on another key, and never steers while idle', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), fc.constantFrom('queue' as const, 'steer' as const), fc.boolean(), fc.nat(3), (k, shift, meta, ctrl, composing, busyEnter, empty, queued) => {
        const intent = composerIntent(key({ key: k, shiftKey: shift, metaKey: meta, ctrlKey: ctrl, isComposing: composing }), ctx({ busyEnter, draftEmpty: empty, queuedCount: queued }));
        if (composing || k !== 'Enter') expect(intent).toBe('none');
        expect(intent).not.toBe('steer');
        expect(intent).not.toBe('steer-all');
      }),
    );
  });
});

describe('the child composer rules', () => {
  it('one-shot → read-only; continuable with a live parent → Send (+ Stop while running); parent offline → Stop only while running, else read-only', () => {
    for (const running of [true, false]) for (const parent of [true, false]) expect(childComposerState({ mode: 'one-shot', running }, parent)).toEqual({ kind: 'read-only', reason: 'one-shot' });
    expect(childComposerState({ mode: 'continuable', running: true }, true)).toEqual({ kind: 'continuable', running: true });
    expect(childComposerState({ mode: 'continuable', running: false }, true)).toEqual({ kind: 'continuable', running: false });
    expect(childComposerState({ mode: 'continuable', running: true }, false)).toEqual({ kind: 'stop-only' });
    expect(childComposerState({ mode: 'continuable', running: false }, false)).toEqual({ kind: 'read-only', reason: 'parent-unavailable' });
  });
});

describe('the sessions tree', () => {
  const row = (sessionId: string, createdAt: number, parentSessionId?: string) => ({ sessionId, kind: parentSessionId ? 'continuable' : 'ordinary', createdAt, live: false, running: false, ...(parentSessionId ? { parentSessionId } : {}) });
  it('roots newest first, each followed by its children oldest first, recursively; an orphan child is a root', () => {
    const order = treeOrder([row('a', 1), row('b', 5), row('a1', 2, 'a'), row('a2', 3, 'a'), row('a1x', 4, 'a1'), row('orphan', 6, 'gone')]);
    expect(order.map(({ session, depth }) => `${'  '.repeat(depth)}${session.sessionId}`)).toEqual(['orphan', 'b', 'a', '  a1', '    a1x', '  a2']);
  });
  it('sessions created in the same millisecond: children by id, roots by id reversed, whatever order the pages listed them in', () => {
    const rows = [row('p', 1), row('q', 1), row('p-b', 2, 'p'), row('p-a', 2, 'p'), row('p-c', 2, 'p')];
    for (const listed of [rows, [...rows].reverse()]) {
      expect(treeOrder(listed).map(({ session, depth }) => `${'  '.repeat(depth)}${session.sessionId}`)).toEqual(['q', 'p', '  p-a', '  p-b', '  p-c']);
    }
  });
});
