import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { SealedContent } from '../domain/sealed-content.js';
import { canonicalJson } from './chain-hash.js';

/** Bytes of a data key (AES-256). */
export const DATA_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The mac key of a data key: HMAC-SHA-256(key, label), so encryption and the mac never share a key. */
const macKeys = new WeakMap<Uint8Array, Buffer>();
const macKeyOf = (key: Uint8Array): Buffer => {
  let k = macKeys.get(key);
  if (k === undefined) macKeys.set(key, (k = createHmac('sha256', key).update('steerlog payload mac v1').digest()));
  return k;
};

/**
 * Seals a JSON payload under a data key: AES-256-GCM over its RFC 8785 serialization with a random 96-bit nonce
 * (ciphertext and tag, base64), and the HMAC-SHA-256 of the same bytes under a key derived from the data key.
 */
export const sealPayload = (keyId: string, key: Uint8Array, payload: unknown): SealedContent => {
  const plain = Buffer.from(canonicalJson(payload), 'utf8');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const ct = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  const mac = createHmac('sha256', macKeyOf(key)).update(plain).digest();
  return { alg: 'aes-256-gcm', keyId, iv: iv.toString('base64'), ct: ct.toString('base64'), mac: mac.toString('base64') };
};

/** A stand-in with exactly the size `sealPayload` gives (for measuring an event before it is sealed): nothing is encrypted. */
export const sealedSizeStandIn = (keyId: string, payload: unknown): SealedContent => {
  const b64 = (bytes: number) => 'A'.repeat(Math.ceil(bytes / 3) * 4);
  return { alg: 'aes-256-gcm', keyId, iv: b64(IV_BYTES), ct: b64(Buffer.byteLength(canonicalJson(payload), 'utf8') + TAG_BYTES), mac: b64(32) };
};

/**
 * The payload a sealed sidecar holds, or null when it does not open with this key (a wrong key, or a ciphertext,
 * nonce, key id or mac that was changed).
 */
export const openPayload = (sealed: SealedContent, key: Uint8Array): { readonly value: unknown } | null => {
  try {
    const all = Buffer.from(sealed.ct, 'base64');
    if (all.length < TAG_BYTES) return null;
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(sealed.keyId, 'utf8'));
    decipher.setAuthTag(all.subarray(all.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(all.subarray(0, all.length - TAG_BYTES)), decipher.final()]);
    const mac = createHmac('sha256', macKeyOf(key)).update(plain).digest('base64');
    if (mac !== sealed.mac) return null;
    return { value: JSON.parse(plain.toString('utf8')) as unknown };
  } catch {
    return null;
  }
};

/** A fresh random data key. */
export const newDataKey = (): Uint8Array => new Uint8Array(randomBytes(DATA_KEY_BYTES));
