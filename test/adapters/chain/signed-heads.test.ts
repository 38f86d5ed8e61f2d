import { describe, expect, it } from 'vitest';
import { ed25519Verifier } from '../../../formats/chain/ed25519.js';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { auditLines } from '../../../domain/audit.js';
import { chainInputOf, GENESIS_HASH, type ChainedFields } from '../../../domain/event-chain.js';
import type { LogEvent } from '../../../domain/events.js';
import { sha256ChainHash } from '../../../runtime/chain-hash.js';
import { chainedSession, testKeys, testSigner } from '../../support/chained-session.js';

/** Recomputes every hash (and seq), as someone who knows the algorithm but not the signing key would. */
const rechain = (stream: string, events: readonly ChainedFields[]): ChainedFields[] => {
  let prev = GENESIS_HASH;
  return events.map((e, seq) => {
    const { hash: _h, ...fields } = { ...e, seq };
    const hash = sha256ChainHash(chainInputOf(stream, fields, prev));
    prev = hash;
    return { ...fields, hash };
  });
};

const heads = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'chain/head');

describe('signed chain heads', () => {
  it('the runtime signs a chain/head at every full checkpoint; the folds ignore them; verify --pubkey accepts the log', async () => {
    const { signer, publicKey } = testSigner();
    const events = await chainedSession('signed', { signer });
    const hs = heads(events);
    expect(hs.length).toBeGreaterThanOrEqual(2);
    for (const h of hs) expect(h.data).toMatchObject({ seq: h.seq - 1, hash: events[h.seq - 1]!.hash, keyId: signer.keyId });
    expect(events.at(-1)!.type).toBe('chain/head'); // dispose drains with a full checkpoint: the log ends signed
    expect(auditLines('signed', events.map((e) => JSON.stringify(e)))).toMatchObject({ ok: true, events: events.length });
    const v = await verifySession('signed', events, { verifiers: [ed25519Verifier(publicKey)] });
    expect(v).toMatchObject({ ok: true, status: 'verified', signatures: { heads: hs.length, lastSignedSeq: events.length - 2, problem: null } });
  });

  it('events appended after the last signed head, with a valid recomputed chain, are reported as not covered', async () => {
    const { signer, publicKey } = testSigner();
    const events = await chainedSession('extended', { signer });
    const forged = rechain('extended', [...events, { ...events[1]!, id: 'f0000000-0000-4000-8000-000000000001', time: events.at(-1)!.time + 1 }]);
    const v = await verifySession('extended', forged, { verifiers: [ed25519Verifier(publicKey)] });
    expect(v.status).toBe('verified'); // the chain alone cannot tell
    expect(v.signatures!.problem).toEqual({ kind: 'unsigned-tail', lastSignedSeq: events.length - 2, events: 1 });
    expect(v.ok).toBe(false);
  });

  it('a truncated tail: cut between heads shows an unsigned tail; cut at an earlier head needs the anchor', async () => {
    const { signer, publicKey } = testSigner();
    const events = await chainedSession('truncated', { signer });
    const verifiers = [ed25519Verifier(publicKey)];
    const full = await verifySession('truncated', events, { verifiers });
    const anchor = full.head!;
    const firstHead = heads(events)[0]!.seq;
    const cutBetween = await verifySession('truncated', events.slice(0, firstHead + 3), { verifiers, anchor });
    expect(cutBetween.signatures!.problem).toMatchObject({ kind: 'unsigned-tail', events: 2 });
    const cutAtHead = await verifySession('truncated', events.slice(0, firstHead + 1), { verifiers, anchor });
    expect(cutAtHead.signatures!.problem).toBeNull();
    expect(cutAtHead.anchor).toEqual({ ...anchor, verdict: 'missing' });
    expect(cutAtHead.ok).toBe(false);
    expect((await verifySession('truncated', events, { verifiers, anchor })).anchor!.verdict).toBe('found');
  });

  it('a forged signature, a head signed by an unknown key, or a log without any head is refused', async () => {
    const { signer, publicKey } = testSigner();
    const events = await chainedSession('forged-sig', { signer });
    const verifiers = [ed25519Verifier(publicKey)];
    const h = heads(events)[0]!;
    const badSig = rechain(
      'forged-sig',
      events.map((e) => (e.seq === h.seq ? { ...e, data: { ...(e.data as object), signature: Buffer.alloc(64, 7).toString('base64') } } : e)),
    );
    expect((await verifySession('forged-sig', badSig, { verifiers })).signatures!.problem).toEqual({ kind: 'bad-signature', seq: h.seq, keyId: signer.keyId });
    const other = ed25519Verifier(testKeys().publicKey);
    expect((await verifySession('forged-sig', events, { verifiers: [other] })).signatures!.problem).toMatchObject({ kind: 'unknown-key', seq: h.seq });
    const unsigned = await chainedSession('no-heads');
    expect((await verifySession('no-heads', unsigned, { verifiers })).signatures!.problem).toEqual({ kind: 'no-signed-head' });
  });

  it('a chain/head that claims a hash the chain does not have is a broken link, keys or not', async () => {
    const { signer } = testSigner();
    const events = await chainedSession('lying-head', { signer });
    const h = heads(events)[0]!;
    const lying = rechain('lying-head', events.map((e) => (e.seq === h.seq ? { ...e, data: { ...(e.data as object), hash: 'f'.repeat(64) } } : e)));
    const v = await verifySession('lying-head', lying);
    expect(v.break).toMatchObject({ kind: 'head-mismatch', seq: h.seq });
  });
});

describe('the signing key option', () => {
  it('openRuntime signs with the key STEERLOG_SIGNING_KEY names; a non-Ed25519 key is a typed error', async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { generateKeyPairSync } = await import('node:crypto');
    const { signerFromOption } = await import('../../../adapters/chain/signer-option.js');
    const { isSigningKeyError } = await import('../../../formats/chain/ed25519.js');
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-key-'));
    try {
      const { privateKey, publicKey } = testKeys();
      const pem = join(dir, 'key.pem');
      writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const signer = signerFromOption(undefined, { STEERLOG_SIGNING_KEY: pem })!;
      expect(signer.keyId).toBe(ed25519Verifier(publicKey).keyId);
      expect(signerFromOption(undefined, {})).toBeUndefined();
      const rsa = join(dir, 'rsa.pem');
      writeFileSync(rsa, generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const e = (() => {
        try {
          signerFromOption(rsa, {});
        } catch (x) {
          return x;
        }
        return null;
      })();
      expect(isSigningKeyError(e)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
