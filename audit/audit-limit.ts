/** How far into a log an audit reads (`--at`): shared by the fold, the chain check and the harness reader. */

/** Where `audit --at` stops: after the event with this seq, or after the last event at or before this time. */
export type AuditLimit = { readonly seq: number } | { readonly time: number };

/** Parses `--at`: a seq (digits) or an ISO 8601 time; null when it is neither. */
export const parseAuditLimit = (text: string): AuditLimit | null => {
  if (/^\d+$/.test(text)) return { seq: Number(text) };
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : { time: t };
};

/** Is this raw envelope past the limit? (Events are in seq order; times may repeat.) */
export const pastLimit = (raw: unknown, limit: AuditLimit | undefined): boolean => {
  if (!limit || typeof raw !== 'object' || raw === null) return false;
  const e = raw as { seq?: unknown; time?: unknown };
  return 'seq' in limit ? typeof e.seq === 'number' && e.seq > limit.seq : typeof e.time === 'number' && e.time > limit.time;
};
