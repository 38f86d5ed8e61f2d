import type { HeadSigner } from '../../runtime/ports/head-signer.js';
import { loadSigner, SIGNING_KEY_ENV } from '../../formats/chain/ed25519.js';

/**
 * The signer a deployment configured: the PEM file given (`--key`), else the one `STEERLOG_SIGNING_KEY` names,
 * else none (no signed heads). Throws `SigningKeyError` for an unreadable or non-Ed25519 key.
 */
export const signerFromOption = (keyFile: string | undefined, env: NodeJS.ProcessEnv = process.env): HeadSigner | undefined => {
  const file = keyFile ?? env[SIGNING_KEY_ENV];
  return file === undefined || file === '' ? undefined : loadSigner(file);
};
