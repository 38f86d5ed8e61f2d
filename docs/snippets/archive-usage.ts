import { archiveSessions, envelopeOfRecorded, openArchiveEventStore, verifySession, type ArchiveOutput, type EventStore, type SessionVerification } from '../../index.js';

/** Moves the store's sessions that ended before 1 November 2026 into an archive file (quoted in docs/audit.md). */
export const archiveOldSessions = async (store: EventStore, file: string): Promise<ArchiveOutput> => {
  // #region archive-in-code
  const result = await archiveSessions(store, { out: file, before: Date.parse('2026-11-01T00:00:00Z') });
  // written, fsynced, read back and verified before any deletion; a session that changed meanwhile stays live
  for (const a of result.archived) if (!a.deleted) console.warn(`${a.session} is still live: ${a.error?.code}`);
  // #endregion archive-in-code
  return result;
};

/** What an auditor does with an archive in code: open it (checked whole) and verify every session it holds. */
export const verifyArchive = async (file: string): Promise<SessionVerification[]> => {
  // #region read-archive
  const archive = await openArchiveEventStore(file); // refuses a damaged or truncated file (ArchiveError archive-corrupt)
  const verdicts: SessionVerification[] = [];
  for (const { session, head } of archive.sessions) {
    const events = (async function* () {
      for await (const e of archive.read(session)) yield envelopeOfRecorded(e);
    })();
    const verdict = await verifySession(session, events, { anchor: head }); // the head the manifest recorded
    verdicts.push(verdict);
  }
  await archive.close();
  // #endregion read-archive
  return verdicts;
};
