import { ed25519Verifier, readKeyFile, type HeadVerifier } from '../../formats/chain/ed25519.js';
import { signerFromOption } from '../chain/signer-option.js';
import type { HeadSigner } from '../../runtime/ports/head-signer.js';

/** What `serve --signing-key` and `serve --pubkey` configure. */
export interface ServeChainOptions {
  /** Signs a chain/head at every checkpoint of every session this host writes; undefined: no signed heads. */
  readonly signer: HeadSigner | undefined;
  /** The public keys the console checks signed heads with (as `steerlog verify --pubkey`). */
  readonly verifiers: readonly HeadVerifier[];
}

/**
 * Reads `--signing-key <pem>` (else the file `STEERLOG_SIGNING_KEY` names, else none) and `--pubkey <pem>[,<pem>…]`;
 * throws `SigningKeyError` naming the file for an unreadable or non-Ed25519 key.
 */
export const serveChainOptions = (signingKey: string | undefined, pubkeys: string | undefined, env: NodeJS.ProcessEnv = process.env): ServeChainOptions => ({
  signer: signerFromOption(signingKey, env),
  verifiers: (pubkeys?.split(',').filter(Boolean) ?? []).map((where) => ed25519Verifier(readKeyFile(where), where)),
});
