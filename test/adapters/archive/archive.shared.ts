import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openArchiveEventStore } from '../../../adapters/archive/archive-event-store.js';
import { archiveSessions, type ArchiveOutput } from '../../../audit/archive-sessions.js';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { auditStream } from '../../../audit/audit-fold.js';
import { auditExtras, auditOutput } from '../../../audit/audit-extras.js';
import { storeEnvelopeBatches, storeEnvelopes } from '../../../audit/log-sources.js';
import { answerWhy } from '../../../adapters/cli/why-command.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { runCli } from '../cli/support/run-cli.js';
import { collect } from '../../contract/event-store.contract.js';
import { CUTOFF, KEPT, MOVED, populate } from './support/archive-fixture.js';

/** A store to archive from: the object, and its spec when the CLI can open it (null: in-process only). */
export interface ArchiveHarness {
  open(): Promise<{ store: EventStore; spec: string | null }>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
/** A fresh temporary directory, removed after the file's tests. */
export const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-archive-'));
  dirs.push(d);
  return d;
};

/** audit, verify and why as `--json` prints them, through the CLI (spec) or the same functions in process. */
const answers = async (store: EventStore, spec: string | null, session: string): Promise<string[]> => {
  if (spec !== null) {
    const outs = [
      await runCli('audit', '--store', spec, session, '--json'),
      await runCli('verify', '--store', spec, session, '--json'),
      await runCli('why', '--store', spec, session, 'm1', '--json'),
      await runCli('why', '--store', spec, session, 'c1', '--json'),
    ];
    for (const o of outs) expect(o.code, o.stderr).toBe(0);
    return outs.map((o) => o.stdout);
  }
  const report = (await auditStream(store, session))!;
  return [
    JSON.stringify(auditOutput(report, await auditExtras(session, storeEnvelopes(store, session)), null)),
    JSON.stringify(await verifySession(session, storeEnvelopes(store, session))),
    JSON.stringify(await answerWhy(session, 'm1', storeEnvelopeBatches(store, session))),
    JSON.stringify(await answerWhy(session, 'c1', storeEnvelopeBatches(store, session))),
  ];
};

/** The archive run on one store: what moves, what stays, and that the archive answers exactly as the store did. */
export function describeArchiveSuite(name: string, harness: ArchiveHarness): void {
  describe(`archive — ${name}`, () => {
    it('moves the ended sessions before the cutoff (families whole), keeps the rest, and the archive answers audit/verify/why byte for byte', async () => {
      const { store, spec } = await harness.open();
      const dir = tempDir();
      const out = join(dir, 'sessions.jsonl.gz');
      try {
        await populate(store);
        const before = new Map<string, string[]>();
        for (const s of MOVED) before.set(s, await answers(store, spec, s));
        const keptEvents = new Map<string, number>();
        for (const k of KEPT) keptEvents.set(k.session, (await collect(() => store.read(k.session))).length);

        let result: ArchiveOutput;
        if (spec !== null) {
          const cli = await runCli('archive', '--store', spec, '--before', new Date(CUTOFF).toISOString(), '--out', out, '--by', 'dpo:eve', '--json');
          expect(cli.code, cli.stdout + cli.stderr).toBe(0);
          result = JSON.parse(cli.stdout) as ArchiveOutput;
        } else {
          result = await archiveSessions(store, { out, before: CUTOFF, clock: () => 1, by: 'dpo:eve' });
        }
        expect(result.ok).toBe(true);
        // who ran it: in the output and in the archive's header
        expect(result.by).toBe('dpo:eve');
        expect(result.file).toBe(out);
        expect(result.archived.map((a) => [a.session, a.deleted])).toEqual(MOVED.map((s) => [s, true]));
        expect(result.kept.map((k) => ({ session: k.session, reason: k.reason }))).toEqual(KEPT);
        expect(readdirSync(dir)).toEqual(['sessions.jsonl.gz']); // no temporary file left

        for (const s of MOVED) {
          expect(await collect(() => store.read(s))).toEqual([]);
          expect(await store.revision(s)).toBe('no_stream');
        }
        for (const k of KEPT) expect((await collect(() => store.read(k.session))).length).toBe(keptEvents.get(k.session));
        expect(new Set((await collect(() => store.readAll())).map((e) => e.stream))).toEqual(new Set(KEPT.map((k) => k.session)));

        const archive = await openArchiveEventStore(out);
        try {
          expect(archive.sessions.map((s) => s.session)).toEqual(MOVED);
          expect(archive.header).toMatchObject({ actor: 'dpo:eve', actorKind: 'user' });
          for (const s of MOVED) expect(await answers(archive, spec === null ? null : `archive:${out}`, s)).toEqual(before.get(s));
        } finally {
          await archive.close();
        }
        const verify = await runCli('verify', out, '--all', '--json');
        expect(verify.code, verify.stderr).toBe(0);
        expect((JSON.parse(verify.stdout) as { sessions: { stream: string; status: string }[] }).sessions.map((v) => [v.stream, v.status])).toEqual(MOVED.map((s) => [s, 'verified']));
        const sessions = await runCli('sessions', '--store', `archive:${out}`, '--json');
        expect((JSON.parse(sessions.stdout) as { sessions: { session: string; status: string }[] }).sessions.map((s) => [s.session, s.status])).toEqual(MOVED.map((s) => [s, 'idle']));

        // a second run finds nothing more to move, and never overwrites the archive
        const again = await archiveSessions(store, { out, before: CUTOFF });
        expect(again.archived).toEqual([]);
        expect(again.by).toBeNull();
        expect(again.file).toBeNull();
      } finally {
        await store.close();
      }
    });

    it('an fsync that fails before the deletions deletes nothing and leaves no file', async () => {
      const { store } = await harness.open();
      const dir = tempDir();
      const out = join(dir, 'failed.jsonl.gz');
      try {
        await populate(store);
        const all = (await collect(() => store.readAll())).map((e) => e.id + e.stream);
        for (const fail of ['syncFile', 'syncDir'] as const) {
          const durability = {
            syncFile: async () => {
              if (fail === 'syncFile') throw Object.assign(new Error('injected EIO on fsync'), { code: 'EIO' });
            },
            syncDir: async () => {
              if (fail === 'syncDir') throw Object.assign(new Error('injected EIO on the directory fsync'), { code: 'EIO' });
            },
          };
          await expect(archiveSessions(store, { out, before: CUTOFF, durability })).rejects.toMatchObject({ code: 'archive-unverified' });
          expect((await collect(() => store.readAll())).map((e) => e.id + e.stream)).toEqual(all);
          expect(readdirSync(dir)).toEqual([]);
        }
      } finally {
        await store.close();
      }
    });
  });
}
