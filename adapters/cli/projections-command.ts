import { replayParked } from '../../projections/index.js';
import { loadProjectionModule, positiveIntOption } from './projection-module.js';
import { projectionPartitionJson, projectionStatus, type ProjectionPartitionReport } from '../../audit/projection-status.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, oneLine, UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { openProjectionStore, workerId } from './projection-worker-cli.js';
import { readingStore } from './reading-store.js';
import { rebuildProjection } from './projections-rebuild.js';

export const PROJECTIONS_USAGE = `usage: steerlog projections status [--store <spec>] [--checkpoints <spec>] [--name <projection>] [--json]
       steerlog projections replay-parked <module> [--store <spec>] [--checkpoints <spec>] [--partitions <n>]
       steerlog projections rebuild <module> [--store <spec>] [--checkpoints <spec>] [--partitions <n>]
       steerlog projections drop <name> <version> [--store <spec>] [--checkpoints <spec>]
  status          per projection version and partition: owner, epoch, position, lag (events and seconds),
                  state (running | behind | idle), events applied, events parked
  replay-parked   re-apply the parked events of the module's projection (its partitions must not be held by a
                  live worker); those that fail again stay parked
  rebuild         build the module's version beside the live one (its own checkpoints and tables), swap it in
                  once caught up (PostgreSQL: the live views <name>_<table> switch in one transaction) and
                  stop; the old version is kept until dropped; a progress bar on a TTY
  drop            delete a projection version's checkpoints, documents, parked events, leases and tables
  --store <spec>        the event store, opened read-only (default ${DEFAULT_STORE_SPEC})
  --checkpoints <spec>  where the workers keep their checkpoints (default: as steerlog project --follow)
exit: 0 done, 1 replay-parked left events parked, 2 usage, 3 the store could not be read`;

const row = (r: ProjectionPartitionReport): string =>
  [
    `${r.key.name}@${r.key.version}${r.live ? ' (live)' : ''}`,
    `${r.key.partition}/${r.key.partitions}`,
    r.state,
    r.owner ?? '-',
    `epoch ${r.epoch}`,
    `position ${r.position ?? '-'}`,
    `lag ${r.lagEvents} events ${r.lagSeconds.toFixed(1)} s`,
    `applied ${r.applied}`,
    `parked ${r.parked}`,
  ].join('  ');

/** `steerlog projections status|replay-parked|drop`: see PROJECTIONS_USAGE. */
export const projectionsCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'checkpoints', 'name', 'partitions'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  const [sub, ...rest] = args.positionals;
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  if (sub === 'status') {
    if (rest.length > 0) throw new UsageError('status takes no operand');
    return readingStore(spec, async (store) => {
      const opened = await openProjectionStore(args.strings.checkpoints, spec, true);
      try {
        const rows = await projectionStatus({ store, projections: opened.projections, ...(args.strings.name ? { name: args.strings.name } : {}) });
        if (args.flags.json) {
          const json = rows.map(projectionPartitionJson);
          io.stdout.write(`${JSON.stringify({ ok: true, checkpoints: opened.label, partitions: json })}\n`);
        } else {
          io.stdout.write(rows.length === 0 ? `no projection checkpoints in ${opened.label}\n` : `${rows.map(row).join('\n')}\n`);
        }
        return EXIT.ok;
      } finally {
        await opened.close();
      }
    });
  }
  if (sub === 'replay-parked') {
    if (rest.length !== 1) throw new UsageError('replay-parked needs one module');
    const projection = await loadProjectionModule(rest[0]!);
    const partitions = positiveIntOption(args.strings.partitions, '--partitions', 1);
    return readingStore(spec, async (store) => {
      const opened = await openProjectionStore(args.strings.checkpoints, spec, true);
      try {
        const report = await replayParked(projection, { store, projections: opened.projections, owner: workerId(), partitions });
        io.stdout.write(`replayed ${report.replayed.length}, still parked ${report.stillParked.length}\n`);
        for (const p of report.stillParked) io.stdout.write(`  parked: stream "${p.stream}" revision ${p.revision} position ${p.position}: ${p.error}\n`);
        return report.stillParked.length === 0 ? EXIT.ok : EXIT.invalid;
      } finally {
        await opened.close();
      }
    });
  }
  if (sub === 'rebuild') {
    if (rest.length !== 1) throw new UsageError('rebuild needs one module');
    const projection = await loadProjectionModule(rest[0]!);
    const partitions = positiveIntOption(args.strings.partitions, '--partitions', 1);
    return readingStore(spec, async (store) => {
      const opened = await openProjectionStore(args.strings.checkpoints, spec, true);
      try {
        const outcome = await rebuildProjection(projection, { store, projections: opened.projections, partitions, io });
        io.stdout.write(
          `rebuilt ${projection.name}@${outcome.version} and swapped it in${outcome.previous !== null ? `; ${projection.name}@${outcome.previous} is kept until steerlog projections drop ${projection.name} ${outcome.previous}` : ''}\n`,
        );
        return EXIT.ok;
      } catch (e) {
        if (e instanceof UsageError) throw e;
        io.stderr.write(`steerlog projections: ${oneLine(e)}\n`);
        return EXIT.invalid;
      } finally {
        await opened.close();
      }
    }, undefined, true);
  }
  if (sub === 'drop') {
    if (rest.length !== 2 || !/^\d+$/.test(rest[1]!)) throw new UsageError('drop needs a projection name and a version');
    return readingStore(spec, async () => {
      const opened = await openProjectionStore(args.strings.checkpoints, spec, true);
      try {
        await opened.projections.drop(rest[0]!, Number(rest[1]));
        io.stdout.write(`dropped ${rest[0]}@${rest[1]} from ${opened.label}\n`);
        return EXIT.ok;
      } finally {
        await opened.close();
      }
    });
  }
  throw new UsageError('projections needs a subcommand: status, replay-parked, rebuild or drop');
};
