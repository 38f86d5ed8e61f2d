import { createAuditor, type AuditReport } from '../domain/audit.js';
import { isLosslessJson } from '../domain/json.js';
import type { RawEnvelope } from '../runtime/ports/recorded-envelope.js';
import { isDshLogError, type DshLogError } from '../formats/dsh/dsh-errors.js';
import { openDshLog, type DshLog } from '../formats/dsh/dsh-source.js';
import { auditExtras, createExtrasCollector } from './audit-extras.js';
import { pastLimit, type AuditLimit } from './audit-limit.js';
import { foldOptions, type AuditPass, type AuditStreams } from './audit-pass.js';

import { sourceErrorOf, type AuditSource } from './audit-source.js';


/**
 * A stream of envelopes that ends, instead of throwing, at the reader's refusal (kept for `error()`); any other
 * failure (the file cannot be read) still throws.
 */
export const untilRefusal = (envelopes: AsyncIterable<RawEnvelope>): { readonly envelopes: AsyncIterable<RawEnvelope>; error(): DshLogError | null } => {
  let error: DshLogError | null = null;
  return {
    envelopes: (async function* () {
      try {
        yield* envelopes;
      } catch (e) {
        if (!isDshLogError(e)) throw e;
        error = e;
      }
    })(),
    error: () => error,
  };
};

/** The fold's refusals name the report's seq; for a harness log each also names the harness seq it stands for. */
const withHarnessSeq = (report: AuditReport): AuditReport =>
  report.errors.length === 0
    ? report
    : { ...report, errors: report.errors.map((e) => (e.seq === null ? e : { ...e, message: `${e.message} (${e.seq === 0 ? 'the harness header' : `harness seq ${e.seq - 1}`})` })) };

/** Opens a harness log for one streaming pass ({@link openDshLog}; a test passes one that counts its openings). */
export type DshOpener = (file: string) => DshLog;

/**
 * `audit` of a harness session log in one streaming pass: each line is read, decoded and `JSON.parse`d once (by the
 * harness reader), mapped, then checked by the chain verifier and folded once (the session fold and the message facts
 * in one step), with the reader's summary and refusal beside them. The result is exactly that of the fold's pass
 * followed by the extras' pass over a second reading of the file; in the one case where those two would read an
 * envelope differently — a mapped envelope JSON text cannot carry as it is (a -0 the harness wrote, say), which the
 * fold read through its JSON text and the extras as it is — the extras are taken from their own pass after this one.
 */
export const auditDshFile = async (
  file: string,
  limit?: AuditLimit,
  options: AuditStreams = {},
  onEvent?: () => void,
  open: DshOpener = openDshLog,
): Promise<AuditPass> => {
  const log = open(file);
  const read = untilRefusal(log.envelopes);
  const collector = createExtrasCollector(null, onEvent, null, undefined, options.actions);
  const auditor = createAuditor(file, { ...foldOptions(options), onFactRecords: collector.factRecords, claimRecords: true });
  let ownPass = false;
  for await (const envelope of read.envelopes) {
    if (pastLimit(envelope, limit)) break;
    collector.verify(envelope);
    // after the chain check (which only reads it): the auditor freezes a valid event in place
    if (!ownPass && isLosslessJson(envelope)) auditor.pushValue(envelope);
    else {
      ownPass = true;
      auditor.push(JSON.stringify(envelope));
    }
  }
  const folded = withHarnessSeq(auditor.report());
  const refusal = read.error();
  // nothing was read (the refusal came first): the fold's only complaint, an empty log, is what the refusal explains
  const report = refusal && folded.events === 0 ? { ...folded, errors: [] } : folded;
  // the fold's own refusal comes first: nothing past it was applied, so a later line's refusal is not reached
  const error = refusal && report.errors.length === 0 ? sourceErrorOf(refusal) : null;
  const source: AuditSource = { ...log.summary(), error };
  const extras = ownPass ? await auditExtras(null, untilRefusal(open(file).envelopes).envelopes, limit, onEvent, null, options.actions) : await collector.result();
  return { report, extras: { ...extras, source } };
};

/** The audit report with the reader's refusal in it (for the human report: verdict and error lines). */
export const withSourceError = (report: AuditReport, source: AuditSource | undefined): Omit<AuditReport, 'errors'> & { readonly errors: readonly { readonly seq: number | null; readonly code: string; readonly message: string }[] } =>
  source?.error ? { ...report, ok: false, errors: [...report.errors, source.error] } : report;

/** The human lines about a harness log: how it was read, what was ignored, a torn tail, and its (absent) chain. */
export const formatAuditSource = (s: AuditSource): string => {
  const stored = s.compression === 'zstd' ? `zstd, ${s.frames} frame${s.frames === 1 ? '' : 's'}` : 'plain JSONL';
  const out = [
    '',
    `source: the harness's session log (dsh, ${stored}), ${s.harnessEvents} event${s.harnessEvents === 1 ? '' : 's'} after its header`,
    '  seqs above are the report\'s: harness seq + 1 (seq 0 is the header, read as session/created)',
    `  ignored: ${s.ignored.length === 0 ? 'none' : s.ignored.map((i) => `${i.type} × ${i.count}`).join(', ')}`,
  ];
  if (s.routes.length > 0) out.push(`  model routes (request/context): ${s.routes.map((r) => `${routeText(r)} from seq ${r.seq}`).join(', ')}`);
  if (s.unanswered.length > 0) {
    out.push(`  streamed, never answered (no assistant/message): ${s.unanswered.map((u) => `turn ${u.turn} step ${u.step} (${u.chunks} chunk${u.chunks === 1 ? '' : 's'})`).join(', ')}`);
  }
  if (s.packed.rows > 0) out.push(`  packed chunk rows: ${s.packed.rows}, decoded into ${s.packed.chunks} assistant/chunk events`);
  if (s.seed) out.push(`  ${seedLine(s.seed)}`);
  if (s.child) {
    out.push(
      s.child.descriptorSeq === null
        ? '  child: no subagent/descriptor of its own after its seed (the harness never resumes such a child): read as one-shot'
        : `  child: ${s.child.kind}, from its subagent/descriptor at harness seq ${s.child.descriptorSeq}`,
    );
  }
  if (s.tornTail) {
    const t = s.tornTail;
    const recovered = t.recovered > 0 ? `; ${t.recovered} byte${t.recovered === 1 ? '' : 's'} of whole lines decoded from its complete blocks were read, as the harness reads them` : '';
    out.push(`  torn tail: ${t.bytes} byte${t.bytes === 1 ? '' : 's'} at byte ${t.offset} not read (an unfinished append, as a crash leaves it; the harness cuts it when it loads the file)${recovered}`);
  }
  if (s.synthesized) {
    out.push(
      `  SYNTHESIZED from seq ${s.synthesized.fromSeq}: ${s.synthesized.types.join(', ')} — the log ends inside a turn; the harness closes it this way (interrupted) when it loads the log, and so does this report`,
    );
  }
  out.push('', 'chain:', "  UNCHAINED: a harness log carries no steerlog hash chain; nothing is verified", '');
  return out.join('\n');
};

/** How a fork's seed was read: where its end-seed is, and the seed the report's seqs use when that is not the header's. */
const seedLine = (seed: NonNullable<AuditSource['seed']>): string => {
  const head = `seed: ${seed.length} inherited event${seed.length === 1 ? '' : 's'} (the header's seedLength)`;
  if (seed.endSeedSeq === null) return `${head}, no session/end-seed at its boundary`;
  if (seed.endSeedSeq === seed.length) return `${head}, closed by session/end-seed at harness seq ${seed.endSeedSeq}`;
  const why = seed.endSeedSeq < seed.length ? "the seed's own last event: the harness writes no second one" : "after the child's descriptor, written with the seed";
  return `${head}, closed by session/end-seed at harness seq ${seed.endSeedSeq} (${why}): the report reads a seed of ${seed.endSeedSeq} events`;
};

/** A model route as the reports show it: `provider/model`, and its context window when the harness gave one. */
export const routeText = (r: { readonly provider: string; readonly model: string; readonly contextWindow: number | null }): string =>
  `${r.provider}/${r.model}${r.contextWindow === null ? '' : ` (context window ${r.contextWindow})`}`;
