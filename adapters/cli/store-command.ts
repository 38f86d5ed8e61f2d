import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MigrateError, migrateStore, type MigrateReport } from '../../audit/migrate-store.js';
import { checkJsonlStore, openJsonlEventStore, QUARANTINE_DIR, QUARANTINE_LOG, rebuildJsonlCatalog, rebuildJsonlIndex, type StoreCheckReport, type StoreFinding } from '../store/jsonl/index.js';
import { StoreIoError } from '../../runtime/ports/store-errors.js';
import { openStore, requireStoreDriver, STORE_DRIVER_PACKAGES } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage } from './cli-failure.js';
import type { CliIo } from './io.js';

export const STORE_USAGE = `usage: steerlog store check <jsonl:dir> [--json]
       steerlog store check <sqlite:file> [--json]
       steerlog store repair <jsonl:dir> [--rebuild-index] [--json]
       steerlog store repair <postgres://…> [--json]
       steerlog store repair <sqlite:file> [--json]
       steerlog store migrate <from-spec> <to-spec> [--json]
  check             verify every line, checksum, index record and cross-reference of a JSONL store, and the
                    session catalog against a fold of the log, writing nothing; report damage (and what a crash
                    left, which the next writable open quarantines)
  check <sqlite:file>
                    (the experimental SQLite store) SQLite's PRAGMA integrity_check, then every stream's revisions
                    and hash chain, and the session catalog against a fold of the events, on a read-only connection
  repair            run crash recovery now (what any writable open does): replay the group journal, move a
                    crash's unfinished commit to quarantine/, rebuild the session catalog; refuses damage like
                    open does
  repair --rebuild-index
                    rebuild global.idx from the stream files, whose lines carry their positions; the events of
                    deleted (archived) streams keep their positions retired; refuses when lines are damaged,
                    positions conflict or are missing (beyond what deleted.log accounts for); the old index goes
                    to quarantine/; then rebuild the session catalog
  repair <postgres://…>
                    migrate the schema (what a writable open does), then rebuild the session catalog table from
                    the events (appends wait meanwhile)
  repair <sqlite:file>
                    (the experimental SQLite store) rebuild its session catalog table from the events, in one
                    transaction (appends wait meanwhile)
  migrate <from-spec> <to-spec>
                    copy every stream of one store into another, empty one (jsonl:<dir>, sqlite:<file>,
                    postgres://…), event by event through the target's own append: ids, times, data, metadata and chain hashes as they are; then read every stream back
                    from both and compare them. The source is opened read-only. A target that holds any event is
                    refused (a migration that stopped part way is not resumed: remove its target and run again)
exit: 0 clean / repaired / migrated, 1 damage found (migrate: the copy differs from its source), 2 usage (migrate: the
      target is not empty, or is the source), 3 the store could not be read or repaired`;

const dirOf = (spec: string): string | undefined => (spec.startsWith('jsonl:') && spec.length > 6 ? spec.slice(6) : undefined);

/** `steerlog store check|repair|migrate`: maintenance of a store (check and --rebuild-index: a JSONL directory). */
export const storeCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { flags: ['json', 'rebuild-index'] });
  if (!args.ok) return reportUsage(io, STORE_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  const [action, spec, ...rest] = args.positionals;
  if (action === 'migrate') {
    if (spec === undefined || rest.length !== 1 || args.flags['rebuild-index']) return reportUsage(io, STORE_USAGE, 'store migrate needs <from-spec> <to-spec>', json);
    return migrateCommand(spec, rest[0]!, io, json);
  }
  if ((action !== 'check' && action !== 'repair') || spec === undefined || rest.length > 0) return reportUsage(io, STORE_USAGE, action === undefined ? 'check or repair?' : undefined, json);
  const dir = dirOf(spec);
  if (action === 'check' && /^sqlite:./.test(spec) && !args.flags['rebuild-index']) return checkSqliteCommand(spec, io, json);
  if (dir === undefined && action === 'repair' && /^(postgres(ql)?:\/\/|sqlite:.)/.test(spec) && !args.flags['rebuild-index']) return repairCatalogTable(spec, io, json);
  if (dir === undefined) return reportUsage(io, STORE_USAGE, `${spec}: store check works on JSONL and SQLite stores (jsonl:<dir>, sqlite:<file>), repair --rebuild-index on JSONL stores; repair also on postgres://… and sqlite:<file>`, json);
  try {
    if (action === 'check') {
      const report = await checkJsonlStore(dir).catch((e: unknown) => {
        throw new StoreIoError('check', { cause: e });
      });
      io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatCheck(spec, report));
      return report.ok ? EXIT.ok : EXIT.invalid;
    }
    if (!args.flags['rebuild-index']) {
      const before = await quarantined(dir);
      const store = await openJsonlEventStore(dir);
      await store.close();
      await rebuildJsonlCatalog(dir);
      const cut = (await quarantined(dir)) - before;
      const line = `recovered ${spec}: ${cut === 0 ? 'nothing to cut' : `${cut} unfinished-commit piece${cut === 1 ? '' : 's'} moved to ${QUARANTINE_DIR}/ (see ${QUARANTINE_DIR}/${QUARANTINE_LOG})`}`;
      io.stdout.write(json ? `${JSON.stringify({ ok: true, quarantined: cut })}\n` : `${line}\n`);
      return EXIT.ok;
    }
    const rebuilt = await rebuildJsonlIndex(dir);
    await rebuildJsonlCatalog(dir);
    const r = rebuilt.retired;
    const retired = r ? ` (${r.events} of them retired: the events of ${r.streams} deleted stream${r.streams === 1 ? '' : 's'}${r.attribution === null ? '' : `, records ${r.attribution === 'previous-index' ? 'from the previous index' : 'in deletion-log order'}`})` : '';
    const line = `rebuilt global.idx of ${spec}: ${rebuilt.events} events${retired} from ${rebuilt.streams} stream files${rebuilt.previousIndex ? `; the previous index is in ${rebuilt.previousIndex}` : ''}`;
    io.stdout.write(json ? `${JSON.stringify({ ok: true, ...rebuilt })}\n` : `${line}\n`);
    return EXIT.ok;
  } catch (e) {
    return reportFailure(io, `store ${action}`, e, json);
  }
};

/**
 * `store repair postgres://…` or `sqlite:<file>`: a writable open (PostgreSQL: it migrates), then the session catalog
 * table folded again from the events.
 */
const repairCatalogTable = async (spec: string, io: CliIo, json: boolean): Promise<number> => {
  try {
    const store = await openStore(spec);
    try {
      // the PostgreSQL or SQLite store's own method (their drivers are loaded only when a spec needs them: no import of the classes here)
      const rebuild = (store as { rebuildSessionCatalog?: () => Promise<number> }).rebuildSessionCatalog;
      if (typeof rebuild !== 'function') throw new TypeError(`${spec} did not open a PostgreSQL or SQLite store`);
      const rows = await rebuild.call(store);
      io.stdout.write(json ? `${JSON.stringify({ ok: true, catalogRows: rows })}\n` : `rebuilt the session catalog of ${spec}: ${rows} stream${rows === 1 ? '' : 's'}\n`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  } catch (e) {
    return reportFailure(io, 'store repair', e, json);
  }
};

/** `store check sqlite:<file>`: the same report, JSON and exit codes as a JSONL store's check. */
const checkSqliteCommand = async (spec: string, io: CliIo, json: boolean): Promise<number> => {
  try {
    await requireStoreDriver('sqlite:', STORE_DRIVER_PACKAGES.sqlite);
    const { checkSqliteStore } = await import('../store/sqlite/store-check.js');
    const report = await checkSqliteStore(spec.slice('sqlite:'.length));
    io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatCheck(spec, report, 'sqlite'));
    return report.ok ? EXIT.ok : EXIT.invalid;
  } catch (e) {
    return reportFailure(io, 'store check', e, json);
  }
};

/** A spec's store, for telling two specs of one store apart: a resolved path for jsonl:/sqlite:, else the spec. */
const storeIdentity = (spec: string): string => {
  const m = /^(jsonl|sqlite):(.+)$/.exec(spec);
  return m ? `${m[1]}:${resolve(m[2]!)}` : spec;
};

/**
 * `store migrate <from> <to>`: the source opened read-only, the target writable (created when new), and
 * migrateStore between them. Refusals exit 2, a copy that differs from its source 1, a store failure 3.
 */
const migrateCommand = async (from: string, to: string, io: CliIo, json: boolean): Promise<number> => {
  const exitOf = (e: unknown, exit: number): number => {
    const code = e instanceof MigrateError ? e.code : undefined;
    return code === 'migrate-mismatch' ? EXIT.invalid : code === undefined ? exit : EXIT.usage;
  };
  try {
    if (storeIdentity(from) === storeIdentity(to)) throw new MigrateError('migrate-same-store', `${to} is the source itself`);
    const source = await openStore(from, { readOnly: true });
    try {
      const target = await openStore(to);
      try {
        const report = await migrateStore(source, target);
        io.stdout.write(json ? `${JSON.stringify({ ok: true, from, to, ...report })}\n` : formatMigrate(from, to, report));
        return EXIT.ok;
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  } catch (e) {
    return exitOf(e, reportFailure(io, 'store migrate', e, json));
  }
};

/** The human report of `store migrate`. */
const formatMigrate = (from: string, to: string, r: MigrateReport): string =>
  `migrated ${from} to ${to}: ${r.events} event${r.events === 1 ? '' : 's'} in ${r.streams} stream${r.streams === 1 ? '' : 's'} (${r.chainHeads} chain head${r.chainHeads === 1 ? '' : 's'}), ${r.appends} append${r.appends === 1 ? '' : 's'}; every stream read back equal to its source; global positions ${r.positions === 'kept' ? 'kept' : 'renumbered in the same order (the source has gaps)'}\n`;

/** Lines in the quarantine log: one per cut. */
const quarantined = async (dir: string): Promise<number> =>
  (await readFile(join(dir, QUARANTINE_DIR, QUARANTINE_LOG), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

/** The human report of `store check` (a SQLite finding's offset is a seq, and 0 when it names a table). */
export const formatCheck = (spec: string, r: StoreCheckReport, kind: 'jsonl' | 'sqlite' = 'jsonl'): string => {
  const what = kind === 'jsonl' ? `committed events in ${r.streams} stream file${r.streams === 1 ? '' : 's'}` : `events in ${r.streams} stream${r.streams === 1 ? '' : 's'}`;
  const out = [`store ${spec}: ${r.events} ${what}, ${r.ok ? 'ok' : `DAMAGED (${r.problems.length} problem${r.problems.length === 1 ? '' : 's'})`}`];
  const at = (f: StoreFinding): string => (kind === 'jsonl' ? `${f.file} byte ${f.offset}` : f.file.startsWith('stream ') ? `${f.file} seq ${f.offset}` : f.file);
  for (const p of r.problems) out.push(`  problem  ${at(p)}: ${p.message}`);
  for (const n of r.notes) out.push(`  note     ${at(n)}: ${n.message}`);
  return `${out.join('\n')}\n`;
};
