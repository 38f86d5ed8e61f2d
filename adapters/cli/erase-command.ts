import { systemClock, type Clock } from '../../runtime/ports/clock.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { isSigningKeyError } from '../../formats/chain/ed25519.js';
import { eraseLog, type EraseOutput } from '../../audit/erase-log.js';
import { signerFromOption } from '../chain/signer-option.js';
import { defaultKeyStoreSpec, openKeyStore } from '../keys/open-key-store.js';
import { openStore } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage } from './cli-failure.js';
import type { CliIo } from './io.js';

export type { EraseOutput } from '../../audit/erase-log.js';

export const ERASE_USAGE = `usage: steerlog erase --store <spec> --session <id> [--keys <spec>] [--by <actor>] [--key <pem>] [--json]
       steerlog erase --store <spec> --actor <id> [--keys <spec>] [--by <actor>] [--key <pem>] [--json]
  --session <id>    destroy every data key of this session (the keys of its actors in it too)
  --actor <id>      destroy every data key of this actor (metadata.actor of what they sent), in every session
  --store <spec>    where the sessions are: jsonl:<dir> | postgres://… | esdb://…; each affected session gets a
                    session/erased event (who, what, when) at the end of its log
  --keys <spec>     the data keys: file:<path> | postgres://…[?schema=name]
                    (default: file:<dir>/keys.json for jsonl:<dir>, the same database for postgres://…)
  --by <actor>      who erases: the metadata.actor of each session/erased event
  --key <pem>       sign the new chain head with this Ed25519 private key (default: $STEERLOG_SIGNING_KEY, else none)
  --json            print the result (or the error) as one JSON object
Destroying a key cannot be undone: what it sealed is unrecoverable. A session still being written elsewhere is
fenced by the new event (its writer stops). Running erase again completes an interrupted one.
exit: 0 erased (or already erased), 2 usage or no data keys for that session or actor, 3 the store or key store
could not be read or written`;

/**
 * `steerlog erase`: parses, opens the key store (and the signer), asks the erase use case (`eraseLog`,
 * audit/erase-log.ts: destroys data keys and records the erasure in each affected session) and prints its answer.
 */
export const eraseCommand = async (argv: readonly string[], io: CliIo, clock: Clock = systemClock): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'session', 'actor', 'keys', 'by', 'key'], flags: ['json'] });
  if (!args.ok) return reportUsage(io, ERASE_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  const { store: spec, session, actor, by } = args.strings;
  if (args.positionals.length > 0) return reportUsage(io, ERASE_USAGE, `unexpected argument ${args.positionals[0]}`, json);
  if (spec === undefined) return reportUsage(io, ERASE_USAGE, 'which store? (--store)', json);
  if ((session === undefined) === (actor === undefined)) return reportUsage(io, ERASE_USAGE, 'erase one --session or one --actor', json);
  if (session === '' || actor === '' || by === '') return reportUsage(io, ERASE_USAGE, 'an empty id', json);
  const keySpec = args.strings.keys ?? defaultKeyStoreSpec(spec);
  if (keySpec === null) return reportUsage(io, ERASE_USAGE, `which key store? (--keys: ${spec} has no default)`, json);
  let signer;
  try {
    signer = signerFromOption(args.strings.key);
  } catch (e) {
    if (isSigningKeyError(e)) return reportUsage(io, ERASE_USAGE, e.message, json);
    throw e;
  }
  let keys: KeyStore | null = null;
  try {
    keys = await openKeyStore(keySpec);
    const out = await eraseLog({
      keys,
      keysName: keySpec,
      selector: session !== undefined ? { session } : { actor: actor! },
      ...(by !== undefined ? { by } : {}),
      openStore: () => openStore(spec),
      clock,
      ...(signer ? { signer } : {}),
    });
    if (!out.ok) {
      if (json) io.stdout.write(`${JSON.stringify(out)}\n`);
      else io.stderr.write(`steerlog erase: ${out.error.message}\n`);
      return EXIT.usage;
    }
    io.stdout.write(json ? `${JSON.stringify(out)}\n` : formatErase(out));
    return EXIT.ok;
  } catch (e) {
    return reportFailure(io, 'erase', e, json);
  } finally {
    await keys?.close();
  }
};

/** The human report of an erase. */
export const formatErase = (o: EraseOutput): string => {
  const lines = [`erased ${o.scope} ${o.subject}${o.by ? ` (by ${o.by})` : ''}: ${o.destroyed.length} key(s) destroyed now, ${o.alreadyDestroyed.length} before`];
  for (const s of o.sessions) {
    if (s.missing) lines.push(`  session ${s.session}: not in this store (its keys are destroyed all the same)`);
    else if (s.seq === null) lines.push(`  session ${s.session}: already recorded`);
    else lines.push(`  session ${s.session}: session/erased at seq ${s.seq} (keys ${s.keyIds.join(', ')})`);
  }
  return `${lines.join('\n')}\n`;
};
