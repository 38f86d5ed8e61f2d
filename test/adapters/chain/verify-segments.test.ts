import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519Verifier } from '../../../formats/chain/ed25519.js';
import { combineSegments, type VerifiedSegment } from '../../../formats/chain/verification-result.js';
import { createSessionVerifier, streamOfFirstEvent, verifySession, type VerifyOptions } from '../../../formats/chain/verify-session.js';
import { chainInputOf, GENESIS_HASH, isChainHash } from '../../../domain/event-chain.js';
import type { LogEvent } from '../../../domain/events.js';
import type { HeadSigner } from '../../../runtime/ports/head-signer.js';
import { sha256ChainHash } from '../../../runtime/chain-hash.js';
import { chainedSession, testSigner } from '../../support/chained-session.js';

// A log verified in segments — each continuing after the stored hash of the event before it, their findings
// combined in order — is verified exactly as by one verifier reading it whole: on intact logs and on every kind of
// mutation, wherever the cuts fall, with and without keys and anchors. (verify-file.ts cuts long files this way.)

/** Cuts are made only after an event the planner accepts: an object with an integer seq and a well-formed hash. */
const cuttable = (raw: unknown): raw is { seq: number; hash: string } =>
  typeof raw === 'object' && raw !== null && Number.isSafeInteger((raw as { seq?: unknown }).seq) && isChainHash((raw as { hash?: unknown }).hash);

/** Verifies `events` in segments ending after each index in `cuts` (the cut event belongs to the segment before). */
const inSegments = (events: readonly unknown[], cuts: readonly number[], options: VerifyOptions) => {
  const stream = events.length > 0 ? streamOfFirstEvent(events[0]) : null;
  const at = stream === null ? [] : [...new Set(cuts)].sort((a, b) => a - b).filter((c) => c < events.length - 1 && cuttable(events[c]));
  const segments: VerifiedSegment[] = [];
  let start = 0;
  let after: { seq: number; hash: string } | null = null;
  for (const end of [...at, events.length - 1]) {
    const verifier = createSessionVerifier(after ? stream : null, { ...options, ...(after ? { startsAfter: after } : {}) });
    for (let i = start; i <= end; i++) if (!verifier.push(events[i])) break;
    segments.push(verifier.segment());
    const cut = events[end];
    after = cuttable(cut) ? { seq: cut.seq, hash: cut.hash } : null;
    start = end + 1;
  }
  return combineSegments(segments, null, options);
};

type Mutation = 'flip-text' | 'other-hash' | 'delete' | 'swap' | 'duplicate' | 'strip-hash' | 'not-an-object' | 'bad-signature' | 'other-seq' | 'strip-all-before';

const mutate = (events: readonly LogEvent[], kind: Mutation, i: number): unknown[] => {
  const out: unknown[] = events.map((e) => JSON.parse(JSON.stringify(e)) as unknown);
  const e = out[i] as Record<string, unknown>;
  switch (kind) {
    case 'flip-text':
      e.time = (e.time as number) + 1;
      break;
    case 'other-hash':
      e.hash = 'f'.repeat(64);
      break;
    case 'delete':
      out.splice(i, 1);
      break;
    case 'swap':
      if (i + 1 < out.length) [out[i], out[i + 1]] = [out[i + 1], out[i]];
      break;
    case 'duplicate':
      out.splice(i, 0, JSON.parse(JSON.stringify(e)));
      break;
    case 'strip-hash':
      delete e.hash;
      break;
    case 'not-an-object':
      out[i] = `{"seq":${i},`;
      break;
    case 'bad-signature':
      // a chain/head whose signature does not verify, in a chain that holds (see resigned): nothing after it is signed
      return resigned(events, i);
    case 'other-seq':
      e.seq = (e.seq as number) + 100;
      break;
    case 'strip-all-before':
      // an unchained prefix: a partly chained log
      for (let k = 0; k <= i; k++) delete (out[k] as Record<string, unknown>).hash;
      break;
  }
  return out;
};

let signer: HeadSigner;

/**
 * `events` rechained and re-signed by `signer`, with the first chain/head at or after `bad` signed wrongly: the
 * chain holds, so the verifier checks the signatures after it (and must stop counting them as signed).
 */
const resigned = (events: readonly LogEvent[], bad: number): unknown[] => {
  let prev = GENESIS_HASH;
  let wrong = false;
  return events.map((e, k) => {
    let data = e.data;
    if (e.type === 'chain/head') {
      const claim = { stream: 'segments', seq: k - 1, hash: prev };
      const signature = !wrong && k >= bad ? ((wrong = true), Buffer.alloc(64, 7).toString('base64')) : signer.sign(claim);
      data = { seq: claim.seq, hash: claim.hash, keyId: signer.keyId, signature };
    }
    const { hash: _old, ...fields } = { ...e, data } as LogEvent;
    const hash = sha256ChainHash(chainInputOf('segments', fields, prev));
    prev = hash;
    return { ...fields, hash };
  });
};

const MUTATIONS: Mutation[] = ['flip-text', 'other-hash', 'delete', 'swap', 'duplicate', 'strip-hash', 'not-an-object', 'bad-signature', 'other-seq', 'strip-all-before'];

describe('verification in segments = verification whole', () => {
  it('on intact and mutated signed logs, wherever the cuts fall, with or without keys and anchors', async () => {
    const keys = testSigner();
    signer = keys.signer;
    const publicKey = keys.publicKey;
    const events = await chainedSession('segments', { signer });
    expect(events.filter((e) => e.type === 'chain/head').length).toBeGreaterThanOrEqual(4);
    const verifiers = [ed25519Verifier(publicKey)];
    const head = (await verifySession('segments', events)).head!;
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.constantFrom(...MUTATIONS), { nil: undefined }),
        fc.nat({ max: events.length - 1 }),
        fc.array(fc.nat({ max: events.length - 1 }), { maxLength: 6 }),
        fc.boolean(),
        fc.constantFrom('none', 'head', 'early', 'wrong'),
        async (mutation, at, cuts, keys, anchorKind) => {
          const log = mutation === undefined ? events.map((e) => e as unknown) : mutate(events, mutation, at);
          const anchor =
            anchorKind === 'head' ? head : anchorKind === 'early' ? { seq: at, hash: events[at]!.hash! } : anchorKind === 'wrong' ? { seq: at, hash: 'a'.repeat(64) } : undefined;
          const options: VerifyOptions = { ...(keys ? { verifiers } : {}), ...(anchor ? { anchor } : {}) };
          expect(inSegments(log, cuts, options)).toEqual(await verifySession(null, log, options));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a segment that does not start where the one before it ended is refused, not combined', async () => {
    const events = await chainedSession('misjoined');
    const first = createSessionVerifier(null);
    for (const e of events.slice(0, 5)) first.push(e);
    const second = createSessionVerifier('misjoined', { startsAfter: { seq: 6, hash: events[6]!.hash! } });
    for (const e of events.slice(7)) second.push(e);
    expect(() => combineSegments([first.segment(), second.segment()], null)).toThrow(/starts after seq 6.*ends at seq 4/);
  });
});
