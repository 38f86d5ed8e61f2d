import type { LogEvent } from '../../domain/events.js';

/**
 * The inbox notifications a log implies, by a separate plain model that shares no code with the runtime or the
 * domain folds: two arrays of ids, `Array.prototype.splice` per durable splice, `claimed` for a removal without an
 * outcome (with the turn of the last `turn/start`), else `discarded` per removed item then `inserted` per inserted
 * item. A fork's inherited seed (between `session/created` with `seedLength` and `session/end-seed`) notifies nothing.
 * Lines read like the harness's live trace: `inserted A`, `discarded A`, `claimed A@1`.
 */
export const plainNotifications = (events: readonly LogEvent[]): string[] => {
  const lists: Record<string, string[]> = { 'next-turn': [], 'next-step': [] };
  const out: string[] = [];
  let turn = 0;
  let inSeed = false;
  for (const e of events) {
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'session/created':
        inSeed = typeof d.seedLength === 'number' && d.seedLength > 0;
        break;
      case 'session/end-seed':
        inSeed = false;
        break;
      case 'turn/start':
        turn = d.turn as number;
        break;
      case 'agent/inbox/spliced': {
        if (inSeed) break;
        const inserted = (d.inserted as { id: string }[]).map((m) => m.id);
        const removed = lists[d.target as string]!.splice(d.start as number, (d.removedCount as number | undefined) ?? 0, ...inserted);
        if (d.removedCount !== undefined && d.outcome === undefined) {
          for (const id of removed) out.push(`claimed ${id}@${turn}`);
        } else {
          for (const id of removed) out.push(`discarded ${id}`);
          for (const id of inserted) out.push(`inserted ${id}`);
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
};
