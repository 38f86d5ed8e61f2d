import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evolveChildren, initialChildrenState, type ChildEpoch, type ChildMessage, type ChildrenState } from '../../../domain/children/child-edges.js';
import type { LogEvent } from '../../../domain/events.js';

type Op =
  | { readonly kind: 'start'; readonly child: number }
  | { readonly kind: 'end'; readonly child: number; readonly run: number }
  | { readonly kind: 'report'; readonly child: number; readonly settled: boolean; readonly alsoOther: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('start' as const), child: fc.nat(2) }),
  fc.record({ kind: fc.constant('end' as const), child: fc.nat(2), run: fc.nat(6) }),
  fc.record({ kind: fc.constant('report' as const), child: fc.nat(2), settled: fc.boolean(), alsoOther: fc.boolean() }),
);

interface ModelRecord {
  childSessionId: string;
  mode: string | null;
  epochs: ChildEpoch[];
  reports: ChildMessage[];
  settlements: ChildMessage[];
}

const plain = (state: ChildrenState): unknown => JSON.parse(JSON.stringify([...state.children.values()]));

describe('the children fold (child-edges) against a model that copies its arrays per event', () => {
  it('gives the same records after every event, and an older state keeps its records as they were', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 80 }), (ops) => {
        const model = new Map<string, ModelRecord>();
        const recordOf = (id: string): ModelRecord => {
          let r = model.get(id);
          if (r === undefined) model.set(id, (r = { childSessionId: id, mode: null, epochs: [], reports: [], settlements: [] }));
          return r;
        };
        let state = initialChildrenState();
        const history: { readonly state: ChildrenState; readonly snapshot: unknown }[] = [];
        let runs = 0;
        ops.forEach((o, seq) => {
          const child = `child-${o.kind === 'report' ? o.child : o.child}`;
          let event: LogEvent;
          switch (o.kind) {
            case 'start': {
              const runId = `run-${runs++}`;
              const r = recordOf(child);
              r.mode = 'task';
              r.epochs = [...r.epochs, { epoch: r.epochs.length + 1, runId, startSeq: seq, endSeq: null, stopReason: null }];
              event = { seq, type: 'subagent/start', data: { childSessionId: child, mode: 'task', epoch: r.epochs.length, runId } } as unknown as LogEvent;
              break;
            }
            case 'end': {
              // sometimes the newest run, sometimes an older or an unknown one (two open runs, an end that closes nothing)
              const r = recordOf(child);
              const runId = o.run === 0 && r.epochs.length > 0 ? r.epochs.at(-1)!.runId : `run-${o.run}`;
              r.epochs = r.epochs.map((e) => (e.runId === runId && e.endSeq === null ? { ...e, endSeq: seq, stopReason: 'completed' } : e));
              event = { seq, type: 'subagent/end', data: { childSessionId: child, runId, stopReason: 'completed' } } as unknown as LogEvent;
              break;
            }
            case 'report': {
              const senders = o.alsoOther ? [child, `child-${(o.child + 1) % 3}`] : [child];
              const inserted = senders.map((sender, i) => ({
                id: `m-${seq}-${i}`,
                role: 'user',
                content: [],
                source: { kind: o.settled ? 'subagent-settled' : 'subagent-report', senderSessionId: sender },
              }));
              for (const m of inserted) {
                const r = recordOf(m.source.senderSessionId);
                const entry = { seq, messageId: m.id };
                if (o.settled) r.settlements = [...r.settlements, entry];
                else r.reports = [...r.reports, entry];
              }
              event = { seq, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted } } as unknown as LogEvent;
              break;
            }
          }
          state = evolveChildren(state, event);
          expect(plain(state)).toEqual(JSON.parse(JSON.stringify([...model.values()])));
          history.push({ state, snapshot: plain(state) });
        });
        for (const h of history) expect(plain(h.state)).toEqual(h.snapshot);
      }),
      { numRuns: 150 },
    );
  });
});
