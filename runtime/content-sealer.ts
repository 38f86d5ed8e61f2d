import { randomUUID } from 'node:crypto';
import type { EventMetadata } from '../domain/event-metadata.js';
import { isJsonObject } from '../domain/json.js';
import { mapSealUnits, sealPlanOf } from '../domain/sealed-content.js';
import { newDataKey, sealedSizeStandIn, sealPayload } from './content-cipher.js';
import { isKeyStoreError, type KeyStore, type NewDataKey } from './ports/key-store.js';

/**
 * Encryption of message content and tool payloads (crypto-shredding; see docs/audit.md, Erasure). Off unless given.
 */
export interface EncryptionOptions {
  /** Where the data keys are kept; destroying one (`steerlog erase`) erases what it sealed. */
  readonly keys: KeyStore;
  /**
   * Content an actor sends (`metadata.actor` of the splice that admits it, and the `user/message` it enters as) is
   * sealed under that actor's own key in the session, so `erase --actor` removes it; all else under the session's
   * key. false: one key per session. @defaultValue true
   */
  readonly perActor?: boolean;
  /** New key ids (unique, never reused). @defaultValue random UUIDs */
  readonly newKeyId?: () => string;
}

/** Keys a resumed session already has, and which key sealed each admitted message. */
export interface SealerSeed {
  readonly keys: readonly { readonly keyId: string; readonly actor?: string; readonly key: Uint8Array }[];
  readonly messageKeys: ReadonlyMap<string, string>;
}

interface Held {
  readonly keyId: string;
  readonly key: Uint8Array;
}

type Obj = Readonly<Record<string, unknown>>;

/** Removes reader-side `sealed` sidecars (a message read from an erased log carries one): only the sealer writes them. */
export const stripSealed = (type: string, data: unknown): unknown => {
  const plan = sealPlanOf(type, data);
  if (plan === null) return data;
  // the common case (nothing to strip) keeps the very same value: no copy on every append, and the units are looked
  // at where they are (the units `mapSealUnits` visits: the data, or each inserted message that is an object)
  if (!(plan.at === 'data' ? 'sealed' in (data as object) : (data as { readonly inserted: readonly unknown[] }).inserted.some((m) => isJsonObject(m) && 'sealed' in m))) return data;
  return mapSealUnits(type, data, (o) => {
    if (!('sealed' in o)) return o;
    const { sealed: _drop, ...rest } = o;
    return rest;
  });
};

/**
 * Seals the payloads of one session's events, synchronously (the session log appends synchronously): a key is made
 * in memory when first needed and stored by `durable()`, which the session log awaits before it writes any event
 * sealed with it. So no event reaches the store before the key that opens it.
 */
export class ContentSealer {
  readonly #session: string;
  readonly #opts: EncryptionOptions;
  /** The key in use per actor ('' for the session's own key). */
  readonly #byActor = new Map<string, Held>();
  readonly #byId = new Map<string, Held>();
  /** The key that sealed each admitted message: its `user/message` is sealed with the same one. */
  readonly #messageKeys = new Map<string, string>();
  #unsaved: NewDataKey[] = [];
  #saving: Promise<void> | null = null;

  constructor(session: string, options: EncryptionOptions, seed?: SealerSeed) {
    this.#session = session;
    this.#opts = options;
    for (const k of seed?.keys ?? []) {
      const held = { keyId: k.keyId, key: k.key };
      this.#byId.set(k.keyId, held);
      this.#byActor.set(k.actor ?? '', held);
    }
    for (const [id, keyId] of seed?.messageKeys ?? []) this.#messageKeys.set(id, keyId);
  }

  /**
   * The data as stored: every payload sealed (any sidecar it came with replaced). `time` is the event's (a new key
   * is stamped with it); null measures only: the result has the stored size, and no key is made or remembered.
   */
  seal(type: string, data: unknown, metadata: EventMetadata | undefined, time: number | null): unknown {
    const plan = sealPlanOf(type, data);
    if (plan === null) return data;
    const perActor = this.#opts.perActor ?? true;
    return mapSealUnits(type, stripSealed(type, data), (o, unit) => {
      let held: Held;
      if (type === 'agent/inbox/spliced') {
        held = this.#keyFor(perActor ? metadata?.actor : undefined, time);
        if (time !== null) this.#messageKeys.set(o.id as string, held.keyId);
      } else if (type === 'user/message') {
        const keyId = this.#messageKeys.get(o.id as string);
        held = (keyId !== undefined ? this.#byId.get(keyId) : undefined) ?? this.#keyFor(undefined, time);
      } else held = this.#keyFor(undefined, time);
      const secret = unit.secret(o as Obj);
      const sealed = time === null ? sealedSizeStandIn(held.keyId, secret) : sealPayload(held.keyId, held.key, secret);
      return { ...unit.blank(o), sealed };
    });
  }

  #keyFor(actor: string | undefined, time: number | null): Held {
    const existing = this.#byActor.get(actor ?? '');
    if (existing) return existing;
    // measuring: a stand-in of a key id's usual length (random UUIDs), nothing made
    if (time === null) return { keyId: 'k'.repeat(36), key: new Uint8Array(32) };
    const held = { keyId: (this.#opts.newKeyId ?? randomUUID)(), key: newDataKey() };
    this.#byActor.set(actor ?? '', held);
    this.#byId.set(held.keyId, held);
    this.#unsaved.push({ keyId: held.keyId, session: this.#session, ...(actor !== undefined ? { actor } : {}), createdAt: time, key: held.key });
    return held;
  }

  /** Resolves when every key made so far is stored; rejects with the store's error (the next call tries again). */
  durable(): Promise<void> {
    if (this.#unsaved.length === 0) return this.#saving ?? Promise.resolve();
    this.#saving ??= this.#save().finally(() => {
      this.#saving = null;
    });
    return this.#saving;
  }

  async #save(): Promise<void> {
    while (this.#unsaved.length > 0) {
      const next = this.#unsaved[0]!;
      try {
        await this.#opts.keys.put(next);
      } catch (e) {
        // an earlier put that was stored although it reported a failure: the same key is there
        if (!(isKeyStoreError(e) && e.code === 'key-exists' && (await this.#stored(next)))) throw e;
      }
      this.#unsaved.shift();
    }
  }

  async #stored(k: NewDataKey): Promise<boolean> {
    const found = (await this.#opts.keys.get([k.keyId])).get(k.keyId);
    return found?.state === 'active' && Buffer.from(found.key).equals(Buffer.from(k.key));
  }
}
