import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/runtime.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { DEFAULT_STORE_SPEC, openStore, type StoreSpec } from './store/open-store.js';
import { signerFromOption } from './chain/signer-option.js';
import { defaultKeyStoreSpec, openKeyStore, type KeyStoreSpec } from './keys/open-key-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';
import { InvalidStoreSpecError } from './store/open-store.js';

/** Options of {@link openRuntime}: those of `createRuntime`, with the store given as a spec. */
export interface OpenRuntimeOptions extends Omit<RuntimeOptions, 'store'> {
  /**
   * Where sessions live: `'jsonl:./dir'`, `'postgres://…'`, `'esdb://…'`, `'memory:'`, or a store object.
   * @defaultValue 'jsonl:./.steerlog'
   */
  readonly store?: StoreSpec;
  /**
   * PEM file of an Ed25519 private key: the runtime signs a `chain/head` at every checkpoint. Ignored when `signer`
   * is given. @defaultValue the file `STEERLOG_SIGNING_KEY` names, else no signing
   */
  readonly signingKeyFile?: string;
  /**
   * Turns encryption on (`RuntimeOptions.encryption`) with the data keys where this names them: `true` for the key
   * store that goes with the store (`file:<dir>/keys.json` for `jsonl:<dir>`, the `steerlog_data_keys` table for
   * `postgres://…`), a key store spec (`file:<path>`, `postgres://…`) or a `KeyStore`. Ignored when `encryption` is
   * given. @defaultValue off: content is stored in clear
   */
  readonly keys?: true | KeyStoreSpec;
}

/** A runtime on the store a spec names; `close()` closes the store when the spec opened it. */
export interface OpenedRuntime extends Runtime {
  close(): Promise<void>;
}

/** The composition root: resolves the store option, then builds the runtime (which only knows the EventStore port). */
export const openRuntime = async (options: OpenRuntimeOptions): Promise<OpenedRuntime> => {
  const spec = options.store ?? DEFAULT_STORE_SPEC;
  const store: EventStore = await openStore(spec);
  const signer = options.signer ?? signerFromOption(options.signingKeyFile);
  let keys: KeyStore | null = null;
  if (options.encryption === undefined && options.keys !== undefined) {
    const keySpec = options.keys === true ? (typeof spec === 'string' ? defaultKeyStoreSpec(spec) : null) : options.keys;
    if (keySpec === null) throw new InvalidStoreSpecError(String(spec), 'keys: true needs a jsonl: or postgres:// store (name a key store instead)');
    keys = await openKeyStore(keySpec);
  }
  const { keys: _spec, ...rest } = options;
  const runtime = createRuntime({ ...rest, store, ...(signer ? { signer } : {}), ...(keys ? { encryption: { keys } } : {}) });
  return {
    ...runtime,
    close: async () => {
      if (keys && typeof options.keys !== 'object') await keys.close();
      if (typeof spec === 'string') await store.close();
    },
  };
};
