import { isSigningKeyError, readKeyFile } from '../../formats/chain/ed25519.js';
import type { SessionVerification } from '../../formats/chain/verify-session.js';
import { formatVerification } from './verification-text.js';
import { looksLikeArchive } from '../../formats/archive/archive-sniff.js';
import { SessionNotFoundError, UsageError } from './cli-failure.js';
import { assertReadableFile, readingFile, readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { verifyFileKey, type VerifyFileKey } from '../../audit/verify-file.js';
import { parseChainAnchor, verifyLog, type ChainAnchor, type VerifyLogResult } from '../../audit/verify-log.js';
import { parseCommandArgs } from './cli-args.js';
import { createProgress } from './progress.js';
import { parseFormatOption } from '../../audit/log-format.js';

export const VERIFY_USAGE = `usage: steerlog verify <log.jsonl> [--format auto|steerlog|dsh] [--pubkey <pem>[,<pem>…]] [--anchor <seq>:<hash>] [--head] [--json]
       steerlog verify --store <spec> <session-id>… | --all [--pubkey …] [--anchor …] [--head] [--json]
       steerlog verify <archive.jsonl.gz> <session-id>… | --all [--pubkey …] [--anchor …] [--head] [--json]
  --format <f>  how to read the file (auto: recognised by its first bytes); a harness log (dsh) has no steerlog
                hash chain: it is reported unchained (exit 1), never verified
  an archive (written by steerlog archive; also --store archive:<file>) is checked whole first: a damaged or
  truncated one is refused (exit 3) naming the line and session
  stores are opened read-only: nothing is created, locked, migrated or repaired
exit: 0 verified, 1 tampered, unchained or not covered, 2 usage, unknown store spec or no such session, 3 the store
      or file could not be read`;

/** What `steerlog verify --json` prints. */
export interface VerifyOutput {
  readonly format: 'steerlog-verify';
  readonly version: 1;
  readonly ok: boolean;
  readonly sessions: readonly SessionVerification[];
  /** What the store left unread (a JSONL store's crash leftovers), one line each: present when read from a store. */
  readonly storeNotes?: readonly string[];
}

export { formatVerification } from './verification-text.js';

/** A harness log's verdict: its unchained status in the harness's terms (it never had a steerlog chain). */
const formatDshVerification = (v: SessionVerification): string =>
  v.status === 'unchained'
    ? `session ${v.stream}: ${v.events} event${v.events === 1 ? '' : 's'} (a harness log, read as dsh), UNCHAINED: the harness's format has no steerlog hash chain; nothing is verified\n`
    : formatVerification(v);


/**
 * `steerlog verify`: parses its arguments (an archive given as a file is read as the store `archive:<file>`), reads
 * the keys, opens the store read-only, asks the verify use case (`verifyLog`, audit/verify-log.ts) and prints its
 * answer. Exit 0 when every session verifies, 1 when one is tampered, unchained or not covered, 2 for a usage
 * error, 3 when the store or file cannot be read.
 */
export const verifyCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'pubkey', 'anchor', 'format'], flags: ['json', 'all', 'head'] });
  if (!args.ok) throw new UsageError(args.error);
  const formatOption = parseFormatOption(args.strings.format);
  if (formatOption === null) throw new UsageError('--format takes auto, steerlog or dsh');
  if (args.strings.store !== undefined && formatOption === 'dsh') throw new UsageError('--format dsh reads a file, not a store');
  // an archive given as a file is read as the store spec archive:<file> (unless --format says it is a log)
  let storeSpec = args.strings.store;
  let positionals = args.positionals;
  if (storeSpec === undefined && positionals.length > 0) await assertReadableFile(positionals[0]!);
  if (storeSpec === undefined && formatOption === 'auto' && positionals.length > 0 && (await looksLikeArchive(positionals[0]!))) {
    storeSpec = `archive:${positionals[0]}`;
    positionals = positionals.slice(1);
  }
  const fromStore = storeSpec !== undefined;
  if (fromStore && args.flags.all && positionals.length > 0) throw new UsageError('--all or session ids, not both');
  if (fromStore && positionals.length === 0 && !args.flags.all) throw new UsageError('which sessions? (session ids, or --all)');
  if (!fromStore && positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'which log?' : 'one log at a time');
  if (!fromStore && args.flags.all) throw new UsageError('--all reads a store (--store <spec>) or an archive');
  // each key parsed once, here: its verifier serves this thread; verifyFile's workers are sent its text
  let publicKeys: VerifyFileKey[] = [];
  try {
    const texts = (args.strings.pubkey?.split(',') ?? []).map((where) => ({ pem: readKeyFile(where), where }));
    publicKeys = texts.map((k) => verifyFileKey(k.pem, k.where));
  } catch (e) {
    if (isSigningKeyError(e)) throw new UsageError(e.message);
    throw e;
  }
  let anchor: ChainAnchor | undefined;
  if (args.strings.anchor !== undefined) {
    const parsed = parseChainAnchor(args.strings.anchor);
    if (!parsed) throw new UsageError('--anchor takes <seq>:<64 hex digits>, as `steerlog verify --head` prints it');
    anchor = parsed;
  }
  const progress = createProgress(io, 'verifying', args.flags.json === true || args.flags.head === true);
  const options = { publicKeys, ...(anchor ? { anchor } : {}), onEvent: progress.tick };
  const storeNotes: string[] = [];
  let result: VerifyLogResult;
  try {
    if (fromStore) {
      result = await readingStore(storeSpec!, async (store) => {
        const verified = await verifyLog({ kind: 'store', store, sessions: args.flags.all ? 'all' : positionals }, options);
        if (verified.kind === 'no-such-session') throw new SessionNotFoundError(verified.session, storeSpec!);
        return verified;
      }, unreadNotes(io, 'verify', args.flags.json ? storeNotes : undefined));
    } else {
      const file = positionals[0]!;
      result = await readingFile(file, () => verifyLog({ kind: 'file', path: file, format: formatOption }, options));
    }
  } finally {
    progress.done();
  }
  const { ok, sessions: results } = result;
  if (args.flags.json) {
    const out: VerifyOutput = { format: 'steerlog-verify', version: 1, ok, sessions: results, ...(fromStore ? { storeNotes } : {}) };
    io.stdout.write(`${JSON.stringify(out)}\n`);
  } else if (args.flags.head) {
    for (const r of results) io.stdout.write(r.head ? `${r.stream} ${r.head.seq}:${r.head.hash}\n` : `${r.stream} -\n`);
  } else {
    for (const r of results) io.stdout.write(result.format === 'dsh' ? formatDshVerification(r) : formatVerification(r));
  }
  return ok ? 0 : 1;
};
