import { eachSealed, type SealedContent } from '../domain/sealed-content.js';
import type { Keyring } from '../runtime/content-opener.js';

/** What became of one data key, as this audit sees it. */
export interface AuditContentKey {
  readonly keyId: string;
  /** `active`: the key store has it; `erased`: destroyed (per the key store, or a `session/erased` event of this log); `unavailable`: no key to ask. */
  readonly state: 'active' | 'erased' | 'unavailable';
  /** Payloads it sealed in this log. */
  readonly payloads: number;
}

/** One `session/erased` event of the log. */
export interface AuditErasure {
  readonly seq: number;
  readonly time: number;
  /** `metadata.actor` of the event: who erased. */
  readonly by: string | null;
  readonly scope: 'session' | 'actor';
  readonly subject: string;
  readonly keyIds: readonly string[];
}

/** The content part of an audit: present when the log holds sealed payloads or erasures. */
export interface AuditContent {
  /** Payloads stored encrypted (a message's content, an answer, a tool call's arguments, a result, …). */
  readonly sealed: number;
  /** Of those: readable with the key store given, erased, and unavailable (no key to ask). */
  readonly readable: number;
  readonly erased: number;
  readonly unavailable: number;
  readonly keys: readonly AuditContentKey[];
  readonly erasures: readonly AuditErasure[];
}

/** Counts sealed payloads per key and collects erasures, one raw envelope at a time. */
export const createContentTally = (keyring: Keyring | null) => {
  const perKey = new Map<string, number>();
  const erasures: AuditErasure[] = [];
  /** One sealed payload, counted under its key unless its state says it was not sealed here. */
  const count = (s: SealedContent): void => {
    if (typeof s.keyId === 'string' && s.state === undefined) perKey.set(s.keyId, (perKey.get(s.keyId) ?? 0) + 1);
  };
  return {
    push(raw: unknown): void {
      if (typeof raw !== 'object' || raw === null) return;
      const e = raw as { seq?: unknown; time?: unknown; type?: unknown; data?: unknown; metadata?: { actor?: unknown } };
      if (typeof e.type !== 'string') return;
      if (e.type === 'session/erased' && typeof e.data === 'object' && e.data !== null) {
        const d = e.data as { scope?: unknown; subject?: unknown; keyIds?: unknown };
        if ((d.scope === 'session' || d.scope === 'actor') && typeof d.subject === 'string' && Array.isArray(d.keyIds)) {
          erasures.push({
            seq: typeof e.seq === 'number' ? e.seq : -1,
            time: typeof e.time === 'number' ? e.time : 0,
            by: typeof e.metadata?.actor === 'string' ? e.metadata.actor : null,
            scope: d.scope,
            subject: d.subject,
            keyIds: d.keyIds.filter((k): k is string => typeof k === 'string'),
          });
        }
        return;
      }
      // (no array of the sidecars per event: the audit reads every event)
      eachSealed(e.type, e.data, count);
    },
    async result(): Promise<AuditContent | null> {
      if (perKey.size === 0 && erasures.length === 0) return null;
      const recorded = new Set(erasures.flatMap((x) => x.keyIds));
      const keys: AuditContentKey[] = [];
      for (const [keyId, payloads] of perKey) {
        const found = keyring ? await keyring.lookup(keyId) : undefined;
        const state = found?.state === 'active' ? 'active' : found?.state === 'destroyed' || recorded.has(keyId) ? 'erased' : 'unavailable';
        keys.push({ keyId, state, payloads });
      }
      const sum = (s: AuditContentKey['state']) => keys.filter((k) => k.state === s).reduce((n, k) => n + k.payloads, 0);
      return { sealed: sum('active') + sum('erased') + sum('unavailable'), readable: sum('active'), erased: sum('erased'), unavailable: sum('unavailable'), keys, erasures };
    },
  };
};

/** The human lines of the content part. */
export const formatAuditContent = (c: AuditContent | null | undefined): string => {
  if (!c) return '';
  const lines = [`\ncontent:`, `  ${c.sealed} payload(s) stored encrypted: ${c.readable} readable, ${c.erased} [erased], ${c.unavailable} [encrypted] (no key given)`];
  for (const x of c.erasures) {
    lines.push(`  seq ${x.seq}  ${new Date(x.time).toISOString()}  erased ${x.scope} ${x.subject}${x.by ? ` by ${x.by}` : ''}: ${x.keyIds.length} key(s)`);
  }
  return `${lines.join('\n')}\n`;
};
