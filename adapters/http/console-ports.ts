import type { EventStore } from '../../runtime/ports/event-store.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { createKeyring } from '../../runtime/content-opener.js';
import type { HeadVerifier } from '../../formats/chain/ed25519.js';
import { verifySession, type SessionVerification } from '../../formats/chain/verify-session.js';
import { auditOutput, type AuditOutput } from '../../audit/audit-extras.js';
import { auditLog } from '../../audit/audit-log.js';
import { storeSource } from '../../audit/log-source.js';
import { storeEnvelopes } from '../../audit/log-sources.js';

/** A head kept outside the log, as `steerlog verify --anchor <seq>:<hash>` takes it. */
export interface ChainAnchor {
  readonly seq: number;
  readonly hash: string;
}

/**
 * What the console asks of the chain and the CLI's audit, answered by the same functions the CLI runs:
 * `verifyChain` is `steerlog verify --store … <id> --json`'s `sessions[0]` (`verifySession` over the store's
 * envelopes, with the host's public keys), `exportAudit` is `steerlog audit --store … <id> --json`.
 */
export interface ConsolePorts {
  /** The session's chain verification; `anchor` as `verify --anchor`. */
  verifyChain(sessionId: string, anchor?: ChainAnchor): Promise<SessionVerification>;
  /** The audit report `audit --json` prints for the whole session; null when the store has no such session. */
  exportAudit(sessionId: string): Promise<AuditOutput | null>;
  /** Key ids of the public keys signatures are checked with (`serve --pubkey`); empty when none were given. */
  readonly publicKeyIds: readonly string[];
}

/** Options of {@link storeConsolePorts}. */
export interface StoreConsolePortsOptions {
  /** Public keys that check signed chain heads (`serve --pubkey`). @defaultValue [] (signatures are not checked) */
  readonly verifiers?: readonly HeadVerifier[];
  /** The data keys sealed content is opened with (`serve --encrypt`). @defaultValue null (sealed content reads `[encrypted]`) */
  readonly keys?: KeyStore | null;
}

/** {@link ConsolePorts} over a store: what `steerlog verify --store` and `steerlog audit --store` read. */
export const storeConsolePorts = (store: EventStore, options: StoreConsolePortsOptions = {}): ConsolePorts => {
  const verifiers = options.verifiers ?? [];
  return {
    publicKeyIds: verifiers.map((v) => v.keyId),
    // the call verify-command.ts makes for each session of `verify --store`
    verifyChain: (sessionId, anchor) => verifySession(sessionId, storeEnvelopes(store, sessionId), { verifiers, ...(anchor ? { anchor } : {}) }),
    // the use case `audit --store <id> --json` runs (without --at), and the object it prints
    exportAudit: async (sessionId) => {
      const audited = await auditLog(storeSource(store, sessionId), { keyring: options.keys ? createKeyring(options.keys) : null });
      return audited?.extras ? auditOutput(audited.report, { ...audited.extras, storeNotes: [] }, null) : null;
    },
  };
};
