import { isLineageSessionNotFoundError, sessionLineage, type LineageNode, type SessionLineage } from '../../audit/session-lineage.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { SessionNotFoundError, UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { readingStore } from './reading-store.js';

export const LINEAGE_USAGE = `usage: steerlog lineage <session> [--store <spec>] [--json]
  the tree of forks and children the session belongs to, from its root, with where each one branched
  --store <spec>  the store, opened read-only (default ${DEFAULT_STORE_SPEC})
exit: 0 printed, 2 usage or no such session, 3 the store could not be read`;

const describeBranch = (n: LineageNode): string => {
  if (n.parentMissing) return `  (parent ${n.parent} not in the store)`;
  const b = n.branch;
  if (b === null) return '';
  switch (b.how) {
    case 'fork':
      return `  fork of ${n.parent} after its seq ${b.afterSeq} (own events from seq ${b.ownFromSeq})`;
    case 'child':
      return `  child of ${n.parent}, started at its seq ${b.startedAtSeqs.join(', ')}`;
    case 'unknown':
      return `  from ${n.parent} (how is not recorded)`;
  }
};

/** The tree as text, one session a line, indented by depth; the session asked about marked `*`. */
export const lineageLines = (lineage: SessionLineage): string[] => {
  const out: string[] = [];
  const walk = (n: LineageNode, depth: number): void => {
    const mark = n.session === lineage.session ? '* ' : '  ';
    const created = n.createdAt !== null ? `  created ${new Date(n.createdAt).toISOString()}` : '';
    out.push(`${'  '.repeat(depth)}${mark}${n.session}  ${n.kind ?? '?'}${created}${describeBranch(n)}`);
    for (const c of n.children) walk(c, depth + 1);
  };
  walk(lineage.root, 0);
  return out;
};

/** `steerlog lineage <session>`: parses, opens the store read-only, asks `sessionLineage` and prints the tree. */
export const lineageCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  const [session, extra] = args.positionals;
  if (session === undefined) throw new UsageError('lineage needs a session id');
  if (extra !== undefined) throw new UsageError(`unexpected argument ${extra}`);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const lineage = await readingStore(spec, async (store) => {
    try {
      return await sessionLineage(store, session);
    } catch (e) {
      if (isLineageSessionNotFoundError(e)) throw new SessionNotFoundError(session, spec);
      throw e;
    }
  });
  io.stdout.write(args.flags.json ? `${JSON.stringify(lineage)}\n` : `${lineageLines(lineage).join('\n')}\n`);
  return 0;
};
