import type { SessionVerification } from '../../formats/chain/verify-session.js';

/*
 * `steerlog verify`'s words for a verification: the CLI prints them and the console shows them, so both give the
 * same reason for a broken chain. Pure (no I/O): the web console bundles it.
 */

const short = (h: string): string => h.slice(0, 16);

/** The first broken link in words, as `steerlog verify` prints it after "first broken link at". */
export const describeBreak = (b: NonNullable<SessionVerification['break']>): string => {
  switch (b.kind) {
    case 'seq-mismatch':
      return `seq ${b.seq}: expected seq ${b.expected}, found seq ${b.found} (an event was deleted, inserted or moved)`;
    case 'hash-mismatch':
      return `seq ${b.seq}: hash mismatch (expected ${b.expected}, found ${b.found})`;
    case 'hash-missing':
      return `seq ${b.seq}: hash missing after chained events (expected ${b.expected})`;
    case 'unreadable':
      return `seq ${b.seq}: unreadable (${b.reason})`;
    case 'head-mismatch':
      return `seq ${b.seq}: chain/head claims seq ${b.claimed.seq} ${short(b.claimed.hash)}…, the chain has ${b.actual ? `seq ${b.actual.seq} ${short(b.actual.hash)}…` : 'nothing before it'}`;
  }
};

/** One session's verdict, human-readable. */
export const formatVerification = (v: SessionVerification): string => {
  const out: string[] = [];
  const n = `${v.events} event${v.events === 1 ? '' : 's'}`;
  switch (v.status) {
    case 'verified':
      out.push(`session ${v.stream}: ${n}, chain verified (head seq ${v.head!.seq} ${v.head!.hash})`);
      break;
    case 'partly-chained':
      out.push(
        `session ${v.stream}: ${n}, PARTLY CHAINED: seq 0–${v.unchained - 1} carry no hash (written before the chain, or stripped); the links from seq ${v.unchained} hold and cover that prefix as it is now`,
      );
      break;
    case 'unchained':
      out.push(`session ${v.stream}: ${n}, UNCHAINED: written before the hash chain existed; nothing is verified`);
      break;
    case 'empty':
      out.push(`session ${v.stream}: no events`);
      break;
    case 'broken':
    case 'unreadable':
      out.push(`session ${v.stream}: TAMPERED or damaged: first broken link at ${describeBreak(v.break!)}`);
      break;
  }
  const sig = v.signatures;
  if (sig) {
    const p = sig.problem;
    const what = `${sig.heads} signed head${sig.heads === 1 ? '' : 's'}`;
    if (!p) out.push(`  signatures: ${what}, all valid; the last covers the whole log`);
    else if (p.kind === 'no-signed-head') out.push(`  signatures: NO valid signed head: nothing is covered by a signature`);
    else if (p.kind === 'bad-signature') out.push(`  signatures: BAD signature on the chain/head at seq ${p.seq} (key ${p.keyId})`);
    else if (p.kind === 'unknown-key') out.push(`  signatures: the chain/head at seq ${p.seq} is signed by key ${p.keyId}, which was not given`);
    else out.push(`  signatures: ${p.events} event${p.events === 1 ? '' : 's'} after the last signed head (which signs seq ${p.lastSignedSeq}) are NOT covered: a running session, a crash, or events added without the key`);
  }
  const a = v.anchor;
  if (a) {
    if (a.verdict === 'found') out.push(`  anchor seq ${a.seq}: present, hash matches`);
    else if (a.verdict === 'missing') out.push(`  anchor seq ${a.seq}: MISSING: the log ends before the anchored head (truncated)`);
    else out.push(`  anchor seq ${a.seq}: MISMATCH: the log has another event there (rewritten)`);
  }
  return out.join('\n') + '\n';
};

