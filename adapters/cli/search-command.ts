import { SEARCHED_TYPES, searchSessions, searchTimeOf, searchWords, type SearchResult } from '../../audit/session-search.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { openReaderKeys } from './reader-keys.js';
import { readingStore } from './reading-store.js';

export const SEARCH_USAGE = `usage: steerlog search <text> [--store <spec>] [--session <id>] [--type <type,…>] [--since <time>] [--until <time>]
                       [--limit <n>] [--keys <spec>] [--json]
  finds the events whose text (messages, answers, tool calls and results) holds every word of <text>, case-insensitive
  --store <spec>    the store, opened read-only (default ${DEFAULT_STORE_SPEC})
  --session <id>    only this session
  --type <types>    only these event types, comma-separated (default ${SEARCHED_TYPES.join(',')})
  --since, --until  only events at or after / before this time: ISO 8601 or milliseconds since the epoch
  --limit <n>       the most hits printed (default 100; every hit is counted)
  --keys <spec>     the data keys of encrypted content (default: the store's); content sealed without a key is not searched
exit: 0 searched (found or not: see the count), 2 usage, 3 the store could not be read`;

/** A time option: milliseconds since the epoch, or an ISO 8601 date-time. */
const timeOf = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const t = searchTimeOf(value);
  if (t === null) throw new UsageError(`--${name} ${value} is not a time (ISO 8601 or milliseconds)`);
  return t;
};

const printText = (io: CliIo, r: SearchResult): void => {
  for (const h of r.hits) io.stdout.write(`${h.session}  seq ${h.seq}  ${h.type}  ${new Date(h.time).toISOString()}${h.actor ? `  ${h.actor}` : ''}\n    ${h.snippet}\n`);
  const more = r.total > r.hits.length ? ` (${r.hits.length} shown)` : '';
  io.stdout.write(`${r.total} hit${r.total === 1 ? '' : 's'}${more} in ${r.sessions.length} session${r.sessions.length === 1 ? '' : 's'}; ${r.scanned} events scanned`);
  io.stdout.write(r.sealedUnsearched > 0 ? `; ${r.sealedUnsearched} sealed without a key, not searched\n` : '\n');
};

/** `steerlog search <text>`: parses, opens the store (and its keys) read-only, asks `searchSessions` and prints. */
export const searchCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'session', 'type', 'since', 'until', 'limit', 'keys'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length === 0) throw new UsageError('search needs the text to look for');
  const text = args.positionals.join(' ');
  if (searchWords(text).length === 0) throw new UsageError('search needs at least one word to look for');
  const limit = args.strings.limit === undefined ? undefined : Number(args.strings.limit);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) throw new UsageError(`--limit ${args.strings.limit} is not a count`);
  const types = args.strings.type?.split(',').filter((t) => t !== '');
  const since = timeOf('since', args.strings.since);
  const until = timeOf('until', args.strings.until);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const keys = await openReaderKeys(spec, args.strings.keys);
  try {
    const query = { text, ...(types ? { types } : {}), ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}), ...(args.strings.session ? { session: args.strings.session } : {}), ...(limit !== undefined ? { limit } : {}) };
    const result = await readingStore(spec, (store) => searchSessions(store, query, keys.keyring));
    if (args.flags.json) io.stdout.write(`${JSON.stringify(result)}\n`);
    else printText(io, result);
    return 0;
  } finally {
    await keys.close();
  }
};
