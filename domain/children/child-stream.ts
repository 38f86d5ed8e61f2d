import type { LogEvent, SessionCreatedData } from '../events.js';
import type { ChildEpoch, ChildMessage, ChildRecord } from './child-record.js';
import type { ChildrenState } from './child-edges.js';
import type { SubagentEndData, SubagentStartData } from './subagent-events.js';

/**
 * Takes each child's epochs, reports and settlements as the children fold decides them, in the order the child's
 * record lists them, instead of the fold holding them until the end (`AuditorOptions.onChildLists`). A child is
 * named by its index in order of first appearance in the log (0, 1, …: its place in the report's `children`).
 */
export interface ChildListSink {
  /** An epoch of child `child` that nothing can change any more (it was ended, and so were all before it). */
  epoch(child: number, epoch: ChildEpoch): void;
  /** The next report of child `child`. */
  report(child: number, message: ChildMessage): void;
  /** The next settlement account of child `child`. */
  settlement(child: number, message: ChildMessage): void;
}

/** What the streaming children fold holds of one child: its id, mode, and the epochs not yet handed to the sink. */
interface HeldChild {
  readonly index: number;
  readonly childSessionId: string;
  mode: ChildRecord['mode'];
  /** The child's epochs from its first still-open one on (in a log the runtime writes: at most the open one). */
  held: ChildEpoch[];
  /** How many of `held` are open. */
  open: number;
}

/**
 * The children fold of `evolveChildren` that hands every child's lists to a sink as they are decided: it holds one
 * entry per child (its id, its mode, its epochs from the first still-open one on), not the lists, so its memory
 * grows with the number of children, not with the log. An epoch goes to the sink once it and every earlier epoch of
 * its child have ended (the order the record lists them in); the report's records carry the rest.
 */
export interface ChildrenStream {
  /** One event, exactly as `evolveChildren` reads it. */
  push(event: LogEvent): void;
  /**
   * The children in order of first appearance, each with its mode and the epochs the sink has not had (still open,
   * or after an open one); `reports` and `settlements` empty (the sink had them all). Null when the log named none.
   */
  records(): readonly ChildRecord[] | null;
  /** The session's own place in a tree, from its header (as `ChildrenState.lineage`). */
  lineage(): ChildrenState['lineage'];
}

/** A children fold that hands each child's epochs, reports and settlements to `sink` as they are decided. */
export const childrenStream = (sink: ChildListSink): ChildrenStream => {
  const children = new Map<string, HeldChild>();
  let lineage: ChildrenState['lineage'] = null;
  const child = (id: string): HeldChild => {
    let c = children.get(id);
    if (c === undefined) {
      c = { index: children.size, childSessionId: id, mode: null, held: [], open: 0 };
      children.set(id, c);
    }
    return c;
  };
  return {
    push(event) {
      switch (event.type) {
        case 'session/created': {
          const d = event.data as SessionCreatedData;
          if (d.parentSession !== undefined) lineage = { parentSession: d.parentSession, origin: d.origin ?? null, delegationDepth: d.delegationDepth ?? null };
          return;
        }
        case 'subagent/start': {
          const d = event.data as SubagentStartData;
          const c = child(d.childSessionId);
          c.mode = d.mode;
          c.held.push({ epoch: d.epoch, runId: d.runId, startSeq: event.seq, endSeq: null, stopReason: null });
          c.open++;
          return;
        }
        case 'subagent/end': {
          const d = event.data as SubagentEndData;
          const c = child(d.childSessionId);
          if (c.open === 0) return;
          const held = c.held;
          // newest first: the run an end closes is the newest epoch in any log the runtime writes
          for (let i = held.length - 1; i >= 0; i--) {
            const e = held[i]!;
            if (e.runId === d.runId && e.endSeq === null) {
              held[i] = { ...e, endSeq: event.seq, stopReason: d.stopReason };
              c.open--;
            }
          }
          // hand over the ended epochs before the first open one
          let done = 0;
          while (done < held.length && held[done]!.endSeq !== null) sink.epoch(c.index, held[done++]!);
          if (done === held.length) c.held = [];
          else if (done > 0) c.held = held.slice(done);
          return;
        }
        case 'agent/inbox/spliced': {
          const inserted = (event.data as { inserted: readonly { id: string; source: { kind: string; senderSessionId?: unknown } }[] }).inserted;
          // (an indexed loop: no iterator per splice)
          for (let i = 0; i < inserted.length; i++) {
            const m = inserted[i]!;
            const sender = m.source.senderSessionId;
            if (typeof sender !== 'string') continue;
            if (m.source.kind === 'subagent-report') sink.report(child(sender).index, { seq: event.seq, messageId: m.id });
            else if (m.source.kind === 'subagent-settled') sink.settlement(child(sender).index, { seq: event.seq, messageId: m.id });
          }
          return;
        }
        default:
          return;
      }
    },
    records() {
      if (children.size === 0) return null;
      const out: ChildRecord[] = [];
      for (const c of children.values()) out.push({ childSessionId: c.childSessionId, mode: c.mode, epochs: [...c.held], reports: [], settlements: [] });
      return out;
    },
    lineage: () => lineage,
  };
};
