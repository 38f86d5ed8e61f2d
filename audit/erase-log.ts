import { eraseKeys, type EraseResult } from '../runtime/erase.js';
import { silentLogger } from '../runtime/logger.js';
import { randomIds, type Clock, type IdSource } from '../runtime/ports/clock.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { HeadSigner } from '../runtime/ports/head-signer.js';
import type { KeySelector, KeyStore } from '../runtime/ports/key-store.js';

/** What `steerlog erase --json` prints: what was destroyed and recorded, by whom, when. */
export interface EraseOutput extends EraseResult {
  readonly format: 'steerlog-erase';
  readonly version: 1;
  readonly ok: true;
  readonly scope: 'session' | 'actor';
  readonly subject: string;
  /** Who erased (`--by`), or null. */
  readonly by: string | null;
  /** When the keys were destroyed (epoch ms). */
  readonly at: number;
}

/** The erase use case's refusal: the key store holds no data key for the session or actor (nothing to destroy). */
export interface EraseRefusal {
  readonly ok: false;
  readonly error: { readonly code: 'no-data-keys'; readonly message: string };
}

/** What {@link eraseLog} does: whose keys, who erases, and where the sessions are. */
export interface EraseLogRequest {
  /** The data keys (opened for writing). */
  readonly keys: KeyStore;
  /** How the key store is named in a refusal (its spec). */
  readonly keysName: string;
  readonly selector: KeySelector;
  /** Who erases: the actor of each `session/erased` event. @defaultValue none */
  readonly by?: string;
  /** Opens the store of the sessions, once the key store is known to hold keys to destroy (nothing is opened otherwise). */
  readonly openStore: () => Promise<EventStore>;
  /** Reads the one time the keys are destroyed at (every `session/erased` event carries it). */
  readonly clock: Clock;
  /** @defaultValue random ids */
  readonly ids?: IdSource;
  /** Signs the new chain head after each `session/erased`. @defaultValue none */
  readonly signer?: HeadSigner;
}

/**
 * The erase use case (crypto-shredding): refuses when the key store holds no key for the selector (was encryption on
 * when it was written?); else opens the store, destroys the keys and records the erasure in each affected session
 * (`eraseKeys`), all at one time. The store it opened is closed before it returns.
 */
export const eraseLog = async (request: EraseLogRequest): Promise<EraseOutput | EraseRefusal> => {
  const { keys, selector, by } = request;
  const known = await keys.keysOf(selector);
  if (known.length === 0) {
    const what = 'session' in selector ? `session ${selector.session}` : `actor ${selector.actor}`;
    return { ok: false, error: { code: 'no-data-keys', message: `no data keys for ${what} in ${request.keysName} (was encryption on when it was written?)` } };
  }
  const store = await request.openStore();
  try {
    const at = request.clock.now();
    const result = await eraseKeys({
      store,
      keys,
      selector,
      ...(by !== undefined ? { by } : {}),
      clock: { now: () => at },
      ids: request.ids ?? randomIds,
      logger: silentLogger,
      ...(request.signer ? { signer: request.signer } : {}),
    });
    return {
      format: 'steerlog-erase',
      version: 1,
      ok: true,
      scope: 'session' in selector ? 'session' : 'actor',
      subject: 'session' in selector ? selector.session : selector.actor,
      by: by ?? null,
      at,
      ...result,
    };
  } finally {
    await store.close();
  }
};
