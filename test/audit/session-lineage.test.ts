import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isLineageSessionNotFoundError, lineageOf, readSessionHeaders, sessionLineage } from '../../audit/session-lineage.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { childSetup, storedEvents } from '../runtime/children/child-harness.js';
import { until } from '../runtime/children/support.js';

const created = (sessionId: string, extra: object = {}) => ({ id: `${sessionId}-0`, type: 'session/created', time: 1, data: { sessionId, createdAt: 1, kind: 'ordinary', ...extra } });

describe('lineage: the tree of forks and children a session belongs to (steerlog lineage)', () => {
  it('a parent with a child (started twice), a fork of the parent and a fork of the child: from any of them, the same tree with each branch point', async () => {
    const store = new MemoryEventStore();
    const h = childSetup({ store });
    const c1 = `${h.prefix}-c1`;
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    await h.manager.followup(h.parent, c1, 'again');
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    await h.parent.checkpoint();
    const parentEvents = await storedEvents(store, h.parent.sessionId);
    const starts = parentEvents.flatMap((e, seq) => (e.type === 'subagent/start' && (e.data as { childSessionId: string }).childSessionId === c1 ? [seq] : []));
    expect(starts).toHaveLength(2);
    const fork = await h.runtime.fork(h.parent.sessionId, { sessionId: `${h.prefix}-fork`, boundary: 3 });
    await fork.dispose();
    const childEvents = await storedEvents(store, c1);
    const childFork = await h.runtime.fork(c1, { sessionId: `${h.prefix}-cfork` });
    await childFork.dispose();

    const lineage = await sessionLineage(store, childFork.sessionId);
    expect(lineage.path).toEqual([h.parent.sessionId, c1, childFork.sessionId]);
    const { root } = lineage;
    expect(root).toMatchObject({ session: h.parent.sessionId, parent: null, branch: null, parentMissing: false });
    expect(root.children.map((c) => [c.session, c.origin, c.branch])).toEqual([
      [c1, 'subagent', { how: 'child', startedAtSeqs: starts }],
      // the runtime's fork records no origin unless asked to: the seed length says it is a fork
      [fork.sessionId, null, { how: 'fork', afterSeq: 2, seedLength: 3, ownFromSeq: 5 }],
    ]);
    const child = root.children[0]!;
    expect(child.children.map((c) => [c.session, c.branch])).toEqual([
      [childFork.sessionId, { how: 'fork', afterSeq: childEvents.length - 1, seedLength: childEvents.length, ownFromSeq: childEvents.length + 2 }],
    ]);
    // the fork's own events start where the lineage says: after its session/created, the seed and session/end-seed
    const forkEvents = await storedEvents(store, fork.sessionId);
    expect(forkEvents[4]!.type).toBe('session/end-seed');
    // asked from the root or the other fork: the same tree
    expect((await sessionLineage(store, h.parent.sessionId)).root).toEqual(root);
    expect((await sessionLineage(store, fork.sessionId)).path).toEqual([h.parent.sessionId, fork.sessionId]);
  });

  it('a parent that is not in the store makes its child a root; a cycle of parents ends; an unknown session is refused', async () => {
    const store: EventStore = new MemoryEventStore();
    await store.append('orphan', [created('orphan', { parentSession: 'archived', seedLength: 4, origin: 'fork' })], 'no_stream');
    await store.append('a', [created('a', { parentSession: 'b' })], 'no_stream');
    await store.append('b', [created('b', { parentSession: 'a' })], 'no_stream');
    const headers = await readSessionHeaders(store);
    expect(lineageOf(headers, 'orphan')).toEqual({
      format: 'steerlog-lineage',
      version: 1,
      session: 'orphan',
      path: ['orphan'],
      root: { session: 'orphan', kind: 'ordinary', origin: 'fork', createdAt: 1, parent: 'archived', branch: null, parentMissing: true, children: [] },
    });
    const cycle = lineageOf(headers, 'a');
    expect(cycle.path).toEqual(['b', 'a']);
    expect(cycle.root.children.map((c) => c.session)).toEqual(['a']);
    expect(cycle.root.children[0]!.children).toEqual([]);
    expect(cycle.root.children[0]!.branch).toEqual({ how: 'unknown' });
    const refused = await sessionLineage(store, 'nobody').catch((e: unknown) => e);
    expect(isLineageSessionNotFoundError(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'session-not-found', session: 'nobody' });
  });
});
