/**
 * A probe for the work done on pending lists in proportion to their length: every item an O(n) operation walks
 * (a full copy, a compaction, a general splice, a full read of a list) is reported to it. Tests install one to
 * check that folding a log costs O(1) amortized per event whatever the number of pending items; nothing installs
 * one in production, and without one the cost is a single null check.
 */
export interface ListWorkProbe {
  /** `items` items were walked by an operation whose cost grows with the list (`what` names it). */
  readonly walked: (what: ListWalk, items: number) => void;
}

/** The O(n) operations on a pending list. */
export type ListWalk = 'copy' | 'compact' | 'general-splice' | 'read-all';

let probe: ListWorkProbe | null = null;

/** Installs `next` as the probe (replacing any other) and returns a function that removes it. */
export const installListWorkProbe = (next: ListWorkProbe): (() => void) => {
  const previous = probe;
  probe = next;
  return () => {
    probe = previous;
  };
};

/** Reports a walk to the installed probe, if any. */
export const reportListWalk = (what: ListWalk, items: number): void => {
  if (probe !== null && items > 0) probe.walked(what, items);
};
