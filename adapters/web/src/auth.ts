/** The sessionStorage key under which the console keeps the bearer token for its tab. */
export const TOKEN_KEY = 'steerlog.token';

/** Why the console asks for a token: the host wants one, it refused the one the tab held, or the user signed out. */
export type SignInReason = 'required' | 'rejected' | 'signed-out';

/** Whether the console may talk to the host (with the token it holds, if any) or must ask for a token first. */
export type AuthState = { readonly kind: 'open'; readonly token: string | null } | { readonly kind: 'sign-in'; readonly reason: SignInReason };

/** The part of the Web Storage API the console uses (the tab's `sessionStorage`). */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The console's token and sign-in state: every request reads the token here and reports a 401 here. */
export interface ConsoleAuth {
  /** The token the tab holds, or null. */
  token(): string | null;
  state(): AuthState;
  /** Calls `listener` on every change of state; returns the unsubscribe. */
  subscribe(listener: (state: AuthState) => void): () => void;
  /** Keeps `token` for the tab (the caller checked it with the host first). */
  signIn(token: string): void;
  /** Forgets the token and asks for one. */
  signOut(): void;
  /**
   * The host answered 401 to a request that carried `sent` (null: no token). The token held is dropped when it is
   * the one refused; a 401 to a request sent with an older token than the one now held changes nothing.
   */
  unauthorized(sent: string | null): void;
}

/**
 * The console's auth over `storage` (the tab's sessionStorage: the token lives as long as the tab, never in
 * localStorage and never in a URL). With no storage (it is missing or the browser refuses it) the token is kept in
 * memory only.
 */
export const createAuth = (storage: TokenStorage | null): ConsoleAuth => {
  let memory: string | null = null;
  const read = (): string | null => {
    try {
      return storage ? storage.getItem(TOKEN_KEY) : memory;
    } catch {
      return memory;
    }
  };
  const write = (token: string | null): void => {
    memory = token;
    try {
      if (token === null) storage?.removeItem(TOKEN_KEY);
      else storage?.setItem(TOKEN_KEY, token);
    } catch {
      // the browser refuses storage: the token stays in memory for this page
    }
  };
  let state: AuthState = { kind: 'open', token: read() };
  const listeners = new Set<(state: AuthState) => void>();
  const set = (next: AuthState): void => {
    state = next;
    for (const l of [...listeners]) l(next);
  };
  return {
    token: () => (state.kind === 'open' ? state.token : null),
    state: () => state,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    signIn: (token) => {
      write(token);
      set({ kind: 'open', token });
    },
    signOut: () => {
      write(null);
      set({ kind: 'sign-in', reason: 'signed-out' });
    },
    unauthorized: (sent) => {
      if (state.kind === 'sign-in') return;
      if (sent !== state.token) return; // a late answer to a request sent before the token changed
      write(null);
      set({ kind: 'sign-in', reason: sent === null ? 'required' : 'rejected' });
    },
  };
};

const tabStorage = (): TokenStorage | null => {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null;
  }
};

/** The auth of this console page: its tab's sessionStorage. */
export const consoleAuth: ConsoleAuth = createAuth(tabStorage());
