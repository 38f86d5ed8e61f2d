import { useEffect, useState } from 'preact/hooks';
import { describeBreak, formatVerification } from '../../cli/verification-text.js';
import type { ConsoleChain, ConsoleSignedHead } from '../../http/console-reads.js';
import type { SessionVerification } from '../../../formats/chain/verify-session.js';
import { consoleClient } from './api.js';
import { CopyId } from './copy-id.js';

/** The chain's verdict in a few words, with the tone the chip takes. */
export const chainHeadline = (v: SessionVerification): { readonly text: string; readonly tone: 'ok' | 'warn' | 'bad' } => {
  switch (v.status) {
    case 'verified':
      return { text: 'Chain verified', tone: v.ok ? 'ok' : 'warn' };
    case 'partly-chained':
      return { text: 'Partly chained', tone: 'warn' };
    case 'unchained':
      return { text: 'Unchained', tone: 'warn' };
    case 'empty':
      return { text: 'No events', tone: 'warn' };
    case 'broken':
    case 'unreadable':
      return { text: `Broken at seq ${v.break?.seq ?? '?'}`, tone: 'bad' };
  }
};

/** What the verification says of one signed head: verified, the problem found at it, or not checked. */
export const headVerdict = (v: SessionVerification, h: ConsoleSignedHead): string => {
  const sig = v.signatures;
  if (sig === null) return 'not checked (no public key given)';
  const p = sig.problem;
  if (p && (p.kind === 'bad-signature' || p.kind === 'unknown-key') && p.seq === h.seq) return p.kind === 'bad-signature' ? 'BAD signature' : 'signed by a key not given';
  if (p && (p.kind === 'bad-signature' || p.kind === 'unknown-key') && h.seq > p.seq) return 'not checked (after the first problem)';
  if (v.break !== null && h.seq >= v.break.seq) return 'not checked (after the broken link)';
  return sig.lastSignedSeq !== null && h.signs.seq <= sig.lastSignedSeq ? 'signature verifies' : 'not checked';
};

const signatureLine = (chain: ConsoleChain): string => {
  const sig = chain.verification.signatures;
  if (sig === null) return chain.headCount === 0 ? 'No signed heads, and no public key given to check one (serve --pubkey).' : `${chain.headCount} signed head${chain.headCount === 1 ? '' : 's'}, not checked: serve was started without --pubkey.`;
  const p = sig.problem;
  const what = `${sig.heads} signed head${sig.heads === 1 ? '' : 's'}`;
  if (!p) return `${what}, all valid; the last covers the whole log.`;
  if (p.kind === 'no-signed-head') return 'No valid signed head: nothing is covered by a signature.';
  if (p.kind === 'bad-signature') return `BAD signature on the chain/head at seq ${p.seq} (key ${p.keyId}).`;
  if (p.kind === 'unknown-key') return `The chain/head at seq ${p.seq} is signed by key ${p.keyId}, which is not one of the host's public keys.`;
  return `${p.events} event${p.events === 1 ? '' : 's'} after the last signed head (which signs seq ${p.lastSignedSeq}) are not covered: a running session, a crash, or events added without the key.`;
};

/**
 * The audit view's chain panel: the verdict `steerlog verify --json` gives for the session (fetched from the host,
 * which runs the same verification with its `--pubkey` keys), in the CLI's own words, the head to anchor elsewhere,
 * every signed head with its key id and verdict, and a check of an anchor kept outside the log.
 */
export const ChainPanel = ({
  sessionId,
  ready = true,
  onTimelineReplaced,
}: {
  sessionId: string;
  /** False: wait before asking (the view's other reads go first). @defaultValue true */
  ready?: boolean;
  /** Called when the server says the timeline drawn so far came from a cache its log contradicted (`timeline: 'replaced'`). */
  onTimelineReplaced?: () => void;
}) => {
  const [chain, setChain] = useState<ConsoleChain | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [anchor, setAnchor] = useState('');
  const [checked, setChecked] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!ready) return;
    let current = true;
    consoleClient.fetchChain(sessionId, checked).then(
      (c) => {
        if (!current) return;
        setChain(c);
        setError(null);
        if (c.timeline === 'replaced') onTimelineReplaced?.();
      },
      (e: unknown) => current && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      current = false;
    };
  }, [sessionId, checked, ready]);
  if (error) return <section class="card chain" aria-label="Hash chain"><h2>Hash chain</h2><p role="alert">{error}</p></section>;
  // the chain is verified from the store (a read of the whole log): asked for once the view's own reads are in
  if (!chain) return <section class="card chain" aria-label="Hash chain"><h2>Hash chain</h2><p role="status">Verifying the chain…</p></section>;
  const v = chain.verification;
  const head = chainHeadline(v);
  return (
    <section class="card chain" aria-label="Hash chain" data-chain-status={v.status} data-chain-ok={String(v.ok)}>
      <h2>Hash chain</h2>
      <p class="verdict">
        <span class={`chip chip-${head.tone}`} data-chain-headline>
          {head.text}
        </span>{' '}
        {v.break ? <span data-chain-reason>first broken link at {describeBreak(v.break)}</span> : null}
        {v.status === 'partly-chained' ? <span>seq 0–{v.unchained - 1} carry no hash; the links from seq {v.unchained} hold.</span> : null}
        {v.status === 'unchained' ? <span>written before the hash chain existed: nothing is verified.</span> : null}
      </p>
      <dl class="facts">
        <dt>Events</dt>
        <dd>
          {v.events} ({v.chained} chained, {v.unchained} unchained)
        </dd>
        <dt>Head</dt>
        <dd>
          {v.head ? (
            <>
              seq {v.head.seq} <CopyId id={`${v.head.seq}:${v.head.hash}`} label="head" shown={v.head.hash} />
            </>
          ) : (
            'none'
          )}
        </dd>
        <dt>Signatures</dt>
        <dd data-chain-signatures>{signatureLine(chain)}</dd>
        <dt>Host's public keys</dt>
        <dd>{chain.publicKeyIds.length === 0 ? 'none (serve --pubkey)' : chain.publicKeyIds.map((k) => <code key={k}>{k} </code>)}</dd>
        {v.anchor ? (
          <>
            <dt>Anchor</dt>
            <dd data-chain-anchor={v.anchor.verdict}>
              seq {v.anchor.seq}: {v.anchor.verdict === 'found' ? 'present, hash matches' : v.anchor.verdict === 'missing' ? 'MISSING: the log ends before the anchored head (truncated)' : 'MISMATCH: the log has another event there (rewritten)'}
            </dd>
          </>
        ) : null}
      </dl>
      {chain.heads.length > 0 ? (
        <details class="heads">
          <summary>
            Signed heads ({chain.headCount}
            {chain.headCount > chain.heads.length ? `, the last ${chain.heads.length} shown` : ''})
          </summary>
          <table>
            <caption class="visually-hidden">Signed chain heads</caption>
            <thead>
              <tr>
                <th scope="col">At seq</th>
                <th scope="col">Signs seq</th>
                <th scope="col">Key id</th>
                <th scope="col">Verdict</th>
              </tr>
            </thead>
            <tbody>
              {chain.heads.map((h) => (
                <tr key={h.seq} data-head-seq={h.seq}>
                  <td>{h.seq}</td>
                  <td>{h.signs.seq}</td>
                  <td>
                    <code>{h.keyId}</code> {h.keyConfigured ? '(host key)' : '(not a host key)'}
                  </td>
                  <td>{headVerdict(v, h)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
      <form
        class="anchor-form"
        onSubmit={(e) => {
          e.preventDefault();
          setChecked(anchor.trim() === '' ? undefined : anchor.trim());
        }}
      >
        <label for="anchor-input">Check an anchor (seq:hash, as steerlog verify --head prints it)</label>
        <input id="anchor-input" value={anchor} onInput={(e) => setAnchor((e.currentTarget as HTMLInputElement).value)} spellcheck={false} />
        <button type="submit">Check anchor</button>
      </form>
      <details class="cli-words">
        <summary>In steerlog verify's words</summary>
        <pre data-chain-cli>{formatVerification(v)}</pre>
      </details>
    </section>
  );
};
