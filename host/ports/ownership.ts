/** Who holds a session's live Agent when several hosts share one store. */
export interface SessionOwner {
  readonly hostId: string;
  /** Where that host answers (its base URL), when it advertised one. */
  readonly url?: string;
}

/** What an ownership port answers when a host asks for a session: owned by this host, or by another (with how to reach it). */
export type AcquireResult = { readonly kind: 'owned' } | { readonly kind: 'elsewhere'; readonly owner: SessionOwner };

/**
 * The ownership port: at most one host runs a session's Agent at a time. A lease is taken before the Host resumes
 * a session, renewed while the host lives, and released when it lets the session go. The store's optimistic
 * concurrency stays the final fence: a host that lost its lease without knowing can never fork the stream.
 */
export interface SessionOwnership {
  readonly self: SessionOwner;
  acquire(sessionId: string): Promise<AcquireResult>;
  release(sessionId: string): Promise<void>;
  /** The host holding a live lease on the session, if any (read only). */
  holder(sessionId: string): Promise<SessionOwner | null>;
  /** Called when a held lease could not be renewed (another host may take the session). */
  onLost(listener: (sessionId: string) => void): () => void;
  close(): Promise<void>;
}

/** One host alone: every session is always owned here. */
export const localOwnership = (hostId = 'local'): SessionOwnership => ({
  self: { hostId },
  acquire: async () => ({ kind: 'owned' }),
  release: async () => {},
  holder: async () => null,
  onLost: () => () => {},
  close: async () => {},
});
