import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasChildCode } from '../../../domain/children/child-errors.js';
import { auditLines } from '../../../domain/audit.js';
import type { LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { AppendResult, ExpectedRevision, NewEvent } from '../../../runtime/ports/event-store.js';
import { testStoreKind } from '../../support/test-store.js';
import { childSetup, storedEvents } from './child-harness.js';
import { until } from './support.js';

type Command =
  | { readonly kind: 'deliver'; readonly child: number; readonly report: boolean }
  | { readonly kind: 'interrupt'; readonly child: number }
  | { readonly kind: 'hijack'; readonly child: number }
  | { readonly kind: 'pause'; readonly ticks: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('deliver' as const), child: fc.nat(2), report: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('interrupt' as const), child: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hijack' as const), child: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pause' as const), ticks: fc.integer({ min: 1, max: 6 }) }) },
);

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};
/** A memory store whose appends take a few macrotasks (from a fixed cycle), so disposals have windows to race into. */
class SlowStore extends MemoryEventStore {
  #n = 0;
  constructor(private readonly delays: readonly number[]) {
    super();
  }
  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    await ticks(this.delays[this.#n++ % this.delays.length]!);
    return super.append(stream, events, expected);
  }
}

const idsInserted = (events: readonly LogEvent[]) =>
  events.flatMap((e) => (e.type === 'agent/inbox/spliced' ? (e.data as { inserted: { id: string }[] }).inserted.map((m) => m.id) : []));

describe('children: random deliveries, interrupts, reports, settlements and disposals (property)', () => {
  it('never loses or doubles an accepted message, reports precede settlement, nothing reaches a closing activation, no unauthorised fold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }), async (commands, delays) => {
        // on memory, a slow store widens every disposal window; the PostgreSQL project runs on its real store
        const h = childSetup(testStoreKind() === 'memory' ? { store: new SlowStore(delays) } : {});
        const children = [1, 2, 3].map((i) => `${h.prefix}-c${i}`);
        let d = 0;
        // a child's reply: report when the prompt asks for it, after a few ticks (so replies interleave with commands)
        for (const id of children) {
          h.model.script(id);
        }
        const reply = async (req: { messages: readonly { role: string; content: readonly unknown[] }[]; signal: AbortSignal }) => {
          await ticks(delays[d++ % delays.length]!);
          if (req.signal.aborted) throw new Error('aborted');
          const last = req.messages.at(-1);
          const text = last && last.role === 'user' ? JSON.stringify(last.content) : '';
          return text.includes('please report') ? { toolCalls: [{ callId: `r${d}`, name: 'report', arguments: { output: `progress ${d}` } }] } : 'ok';
        };
        for (const id of children) for (let i = 0; i < 40; i++) h.model.script(id, reply);
        const other = h.runtime.createSession({ sessionId: `${h.prefix}-other`, systemPrompt: 'other' });
        const accepted = new Map<string, string[]>(children.map((c) => [c, []]));
        const violations: string[] = [];
        // no accepted delivery may be inserted into an activation that is closing
        const watched = new WeakSet<Agent>();
        const watch = (id: string) => {
          const agent = h.runtime.liveAgent(id);
          if (!agent || watched.has(agent)) return;
          watched.add(agent);
          agent.onEvent((e) => {
            if (e.type !== 'agent/inbox/spliced') return;
            // the only insertions into a child here are deliveries
            for (const m of (e.data as { inserted: { id: string }[] }).inserted) {
              if (h.manager.isClosing(id) || agent !== h.runtime.liveAgent(id)) violations.push(`${m.id} inserted into a closing or disposed activation of ${id}`);
            }
          });
        };
        for (const id of children) {
          const started = await h.manager.startContinuable(h.parent, { content: 'begin', childSessionId: id });
          accepted.get(id)!.push(started.messageId);
          watch(id);
        }
        for (const c of commands) {
          const id = children[c.kind === 'pause' ? 0 : c.child]!;
          switch (c.kind) {
            case 'deliver': {
              const messageId = await h.manager.followup(h.parent, id, c.report ? 'please report' : 'carry on');
              accepted.get(id)!.push(messageId);
              watch(id);
              break;
            }
            case 'interrupt':
              h.manager.interrupt(id, { kind: 'user', parentSessionId: h.parent.sessionId });
              break;
            case 'hijack': {
              const live = h.runtime.liveAgent(id);
              const stored = (await storedEvents(h.store, id)).length;
              const refused = await h.manager.followup(other, id, 'not yours').catch((e: unknown) => e);
              if (!hasChildCode(refused, 'subagent-unauthorized')) violations.push(`hijack of ${id} was not refused`);
              const after = h.runtime.liveAgent(id);
              if (after !== undefined && after !== live) violations.push(`hijack of ${id} resumed it`);
              if (!live && (await storedEvents(h.store, id)).length !== stored) violations.push(`hijack of ${id} wrote to its log`);
              break;
            }
            case 'pause':
              await ticks(c.ticks);
              break;
          }
        }
        // the end: the parent's lineage closes (parked work is canceled, never lost silently)
        await until(() => children.every((id) => h.manager.state(id) !== 'running' || h.runtime.liveAgent(id)?.status === 'idle'));
        await h.parent.whenIdle();
        await h.manager.closeLineage(h.parent);
        expect(violations).toEqual([]);

        const parentLog = await storedEvents(h.store, h.parent.sessionId);
        for (const id of children) {
          const log = await storedEvents(h.store, id);
          expect(auditLines(id, log.map((e) => JSON.stringify(e))).ok).toBe(true);
          // every accepted id: inserted exactly once; then entered the model once, or was canceled unrun
          const inserted = idsInserted(log);
          const entered = log.filter((e) => e.type === 'user/message').map((e) => (e.data as { id: string }).id);
          for (const m of accepted.get(id)!) {
            expect(inserted.filter((x) => x === m), `${m} in ${id}`).toHaveLength(1);
            expect(entered.filter((x) => x === m).length, `${m} in ${id}`).toBeLessThanOrEqual(1);
          }
          // per epoch in the parent's log: reports of this child precede its settlement notice
          let afterSettlement = false;
          for (const e of parentLog) {
            if (e.type === 'subagent/start' && (e.data as { childSessionId: string }).childSessionId === id) afterSettlement = false;
            if (e.type !== 'agent/inbox/spliced') continue;
            for (const m of (e.data as { inserted: { source: { kind: string; senderSessionId?: string } }[] }).inserted) {
              if (m.source.senderSessionId !== id) continue;
              if (m.source.kind === 'subagent-report') expect(afterSettlement, `a report of ${id} after its settlement`).toBe(false);
              if (m.source.kind === 'subagent-settled') afterSettlement = true;
            }
          }
          // every epoch has its START and END
          const edges = parentLog.filter((e) => (e.type === 'subagent/start' || e.type === 'subagent/end') && (e.data as { childSessionId: string }).childSessionId === id);
          expect(edges.map((e) => e.type)).toEqual(edges.map((_, i) => (i % 2 === 0 ? 'subagent/start' : 'subagent/end')));
        }
        expect(auditLines(h.parent.sessionId, parentLog.map((e) => JSON.stringify(e))).ok).toBe(true);
      }),
      { numRuns: 25 },
    );
  });
});
