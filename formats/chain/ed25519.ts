import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalJson } from '../../runtime/chain-hash.js';
import type { ChainHeadClaim, HeadSigner } from '../../runtime/ports/head-signer.js';

/** A key that is not an Ed25519 key, or a file that holds none. */
export class SigningKeyError extends Error {
  readonly code = 'invalid-signing-key' as const;
  constructor(where: string, reason: string, options?: { cause?: unknown }) {
    super(`${where}: ${reason}`, options);
    this.name = 'SigningKeyError';
  }
}
/** Is this a `SigningKeyError` (by its stable code)? */
export const isSigningKeyError = (e: unknown): e is SigningKeyError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-signing-key';

/** The environment variable naming the PEM file of the runtime's Ed25519 private key. */
export const SIGNING_KEY_ENV = 'STEERLOG_SIGNING_KEY';

/** The key id stored beside each signature: the first 16 hex digits of SHA-256 of the public key (SPKI DER). */
export const keyIdOf = (publicKey: KeyObject): string =>
  createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);

/** The bytes a chain head signature covers: the RFC 8785 serialization of the claim. */
export const chainHeadMessage = (claim: ChainHeadClaim): Buffer =>
  Buffer.from(canonicalJson({ stream: claim.stream, seq: claim.seq, hash: claim.hash }), 'utf8');

const assertEd25519 = (key: KeyObject, where: string): KeyObject => {
  if (key.asymmetricKeyType !== 'ed25519') throw new SigningKeyError(where, `an Ed25519 key is required, found ${key.asymmetricKeyType ?? key.type}`);
  return key;
};

/** A HeadSigner over an Ed25519 private key (a KeyObject or PEM text). */
export const ed25519Signer = (privateKey: KeyObject | string, where = 'signing key'): HeadSigner => {
  let key: KeyObject;
  try {
    key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  } catch (e) {
    throw new SigningKeyError(where, 'not a PEM private key', { cause: e });
  }
  assertEd25519(key, where);
  const keyId = keyIdOf(createPublicKey(key));
  return { keyId, sign: (claim) => sign(null, chainHeadMessage(claim), key).toString('base64') };
};

/** Reads a PEM private key file into a signer. */
export const loadSigner = (file: string): HeadSigner => ed25519Signer(readKeyFile(file), file);

/** The text of a PEM key file; SigningKeyError naming the file when it cannot be read. */
export const readKeyFile = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new SigningKeyError(file, 'cannot read the key file', { cause: e });
  }
};

/** A public key that checks chain head signatures. */
export interface HeadVerifier {
  readonly keyId: string;
  verify(claim: ChainHeadClaim, signature: string): boolean;
}

/** A verifier over an Ed25519 public key (a KeyObject or PEM text; a private key's public half also works). */
export const ed25519Verifier = (publicKey: KeyObject | string, where = 'public key'): HeadVerifier => {
  let key: KeyObject;
  try {
    key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  } catch (e) {
    throw new SigningKeyError(where, 'not a PEM public key', { cause: e });
  }
  assertEd25519(key, where);
  return {
    keyId: keyIdOf(key),
    verify: (claim, signature) => {
      try {
        return verify(null, chainHeadMessage(claim), key, Buffer.from(signature, 'base64'));
      } catch {
        return false;
      }
    },
  };
};

/** Reads a PEM public key file into a verifier. */
export const loadVerifier = (file: string): HeadVerifier => ed25519Verifier(readKeyFile(file), file);
