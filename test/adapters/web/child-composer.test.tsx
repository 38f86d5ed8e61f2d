import type { VNode } from 'preact';
import { describe, expect, it } from 'vitest';
import { ChildComposer, type ChildComposerProps } from '../../../adapters/web/src/child-composer.js';
import { childComposerState } from '../../../adapters/web/src/composer-policy.js';

/**
 * The child composer in its three states, rendered without a DOM: the component holds no state, so calling it
 * gives its element tree, which is searched for what a user would see (controls, their names, disabled, placeholder).
 */
type Node = VNode<Record<string, unknown>>;
const render = (props: Partial<ChildComposerProps> & Pick<ChildComposerProps, 'state'>) => {
  const calls: string[] = [];
  const tree = ChildComposer({ draft: 'next', onDraft: (t) => calls.push(`draft:${t}`), onSend: () => calls.push('send'), onStop: () => calls.push('stop'), ...props }) as Node;
  const all: Node[] = [];
  const walk = (n: unknown) => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (n === null || typeof n !== 'object' || !('type' in n)) return;
    all.push(n as Node);
    walk((n as Node).props['children']);
  };
  walk(tree);
  const textOf = (n: unknown): string => (Array.isArray(n) ? n.map(textOf).join('') : typeof n === 'string' ? n : n && typeof n === 'object' && 'props' in n ? textOf((n as Node).props['children']) : '');
  const buttons = all.filter((n) => n.type === 'button').map((b) => ({ name: textOf(b.props['children']).trim(), disabled: b.props['disabled'] === true, type: b.props['type'], node: b }));
  const textarea = all.find((n) => n.type === 'textarea');
  return { tree, all, buttons, textarea, calls, text: textOf(tree) };
};
const key = (k: string, extra: Record<string, unknown> = {}) => {
  let prevented = false;
  return { event: { key: k, shiftKey: false, metaKey: false, ctrlKey: false, isComposing: false, preventDefault: () => (prevented = true), ...extra }, prevented: () => prevented };
};

describe('the child composer', () => {
  it('continuable, parent live, running: Send stays the primary button and a separate Stop interrupts', () => {
    const r = render({ state: childComposerState({ mode: 'continuable', running: true }, true) });
    expect(r.buttons.map(({ name, disabled, type }) => ({ name, disabled, type }))).toEqual([
      { name: 'Send', disabled: false, type: 'submit' },
      { name: 'Stop', disabled: false, type: 'button' },
    ]);
    expect(r.buttons[0]!.node.props['class']).toBe('primary');
    expect(r.textarea!.props['disabled']).toBe(false);
    (r.buttons[1]!.node.props['onClick'] as () => void)();
    // Enter and Cmd+Enter both send a follow-up (a child takes no steer); Shift+Enter is a newline
    const onKeyDown = r.textarea!.props['onKeyDown'] as (e: unknown) => void;
    const enter = key('Enter');
    onKeyDown(enter.event);
    onKeyDown(key('Enter', { metaKey: true }).event);
    const shift = key('Enter', { shiftKey: true });
    onKeyDown(shift.event);
    expect(r.calls).toEqual(['stop', 'send', 'send']);
    expect([enter.prevented(), shift.prevented()]).toEqual([true, false]);
  });

  it('continuable, parent live, not running: Send only, no Stop', () => {
    const r = render({ state: childComposerState({ mode: 'continuable', running: false }, true) });
    expect(r.buttons.map((b) => b.name)).toEqual(['Send']);
    (r.tree.props['onSubmit'] as (e: unknown) => void)({ preventDefault: () => {} });
    expect(r.calls).toEqual(['send']);
  });

  it('one-shot: a read-only explanation, no input, never Stop (even while it runs)', () => {
    for (const running of [true, false]) {
      for (const parentAvailable of [true, false]) {
        const r = render({ state: childComposerState({ mode: 'one-shot', running }, parentAvailable) });
        expect(r.tree.props['data-read-only']).toBe('one-shot');
        expect(r.buttons).toEqual([]);
        expect(r.textarea).toBeUndefined();
        expect(r.text).toBe('This is a one-shot child: it returns one result to its parent and takes no follow-up.');
      }
    }
  });

  it('parent offline: a running child keeps only Stop (input and Send disabled, the placeholder says why); an idle one is read-only', () => {
    const r = render({ state: childComposerState({ mode: 'continuable', running: true }, false) });
    expect(r.buttons.map(({ name, disabled }) => ({ name, disabled }))).toEqual([
      { name: 'Send', disabled: true },
      { name: 'Stop', disabled: false },
    ]);
    expect(r.textarea!.props['disabled']).toBe(true);
    expect(r.textarea!.props['placeholder']).toBe('parent offline: it cannot take a follow-up now; you can still stop the child');
    (r.textarea!.props['onKeyDown'] as (e: unknown) => void)(key('Enter').event);
    (r.tree.props['onSubmit'] as (e: unknown) => void)({ preventDefault: () => {} });
    (r.buttons[1]!.node.props['onClick'] as () => void)();
    expect(r.calls).toEqual(['stop']);
    const idle = render({ state: childComposerState({ mode: 'continuable', running: false }, false) });
    expect(idle.tree.props['data-read-only']).toBe('parent-unavailable');
    expect(idle.buttons).toEqual([]);
  });
});
