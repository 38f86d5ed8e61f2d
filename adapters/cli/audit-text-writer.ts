import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fatesById, otherInputs, type ActionSink } from '../../audit/audit-extras.js';
import { formatAuditContent } from '../../audit/audit-content.js';
import { formatAuditSource, withSourceError } from '../../audit/dsh-audit.js';
import { readLineBatches } from '../../audit/read-lines.js';
import type { AuditReport } from '../../domain/audit.js';
import { fateOf } from '../../domain/message-facts.js';
import { appendPieces, chunkedWriter, copyElements, spoolFile, type AuditSpool } from './audit-json-writer.js';
import { auditReportHead, auditReportTail, messageLine, turnTextPieces } from './format-audit.js';
import { ACTIONS_HEAD, actionLine, formatAuditChain, OTHER_FATES_HEAD, otherFateLine } from './format-audit-extras.js';

const READ_BYTES = 64 * 1024;

/**
 * The spool of the human `audit` report (without `--json`): the closed turns and the actions go to temporary files
 * as their lines, the entered messages as JSON lines (each is looked up by id once the fates are known), as the
 * audit decides them, so the report is printed from them instead of being held whole. The children stay in the
 * fold's report (their lines come after the pending lists, from the records it keeps). The output is exactly the
 * report printed from the whole fold (`formatAuditReport` and the extras' lines); `write` ignores its `at`.
 */
export const openAuditTextSpool = (): AuditSpool => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-audit-spool-'));
  const turns = spoolFile(join(dir, 'turns.txt'), '');
  const messages = spoolFile(join(dir, 'messages.jsonl'));
  const actions = spoolFile(join(dir, 'actions.txt'), '');
  const turn = (t: AuditReport['turns'][number]): void => appendPieces(turns, turnTextPieces(t));
  const message = (m: AuditReport['messages'][number]): void => messages.append(JSON.stringify(m));
  const actionSink: ActionSink = { push: (a) => actions.append(`${actionLine(a)}\n`), restart: () => actions.restart() };
  const finish = (): void => {
    turns.finish();
    messages.finish();
    actions.finish();
  };
  return {
    turn,
    message,
    actions: actionSink,
    streams: { onTurn: turn, onMessage: message, actions: actionSink },
    async write(io, report, extras) {
      finish();
      const out = chunkedWriter(io);
      const source = extras.source;
      const printable = source ? withSourceError(report, source) : report;
      await out.write(auditReportHead(printable));
      if (turns.count + report.turns.length === 0) await out.write('  (none)\n');
      await copyElements(out, turns.path);
      // the open turn, if any: the report holds only it
      for (const t of report.turns) for (const piece of turnTextPieces(t)) await out.write(piece);
      await out.write('\nmessages:\n');
      if (messages.count === 0) await out.write('  (none)\n');
      const fates = fatesById(extras);
      const fateOfId = (id: string) => fates.get(id) ?? fateOf(id, []);
      const shown = new Set<string>();
      // an entered message whose input's last life did not enter is listed again below, among the other fates
      let enteredOthers = false;
      for await (const lines of readLineBatches(messages.path, { chunkBytes: READ_BYTES })) {
        for (const line of lines) {
          const m = JSON.parse(line) as AuditReport['messages'][number];
          shown.add(m.id);
          if (fateOfId(m.id).fate !== 'entered') enteredOthers = true;
          const flushed = out.write(`${messageLine(m)}\n`);
          if (flushed !== undefined) await flushed;
        }
      }
      await out.write(auditReportTail(printable));
      const others = otherInputs(extras, shown).filter((m) => m.fate.fate !== 'entered');
      if (enteredOthers || others.length > 0) {
        await out.write(OTHER_FATES_HEAD);
        if (enteredOthers) {
          for await (const lines of readLineBatches(messages.path, { chunkBytes: READ_BYTES })) {
            for (const line of lines) {
              const m = JSON.parse(line) as AuditReport['messages'][number];
              const fate = fateOfId(m.id);
              if (fate.fate === 'entered') continue;
              const flushed = out.write(`${otherFateLine({ ...m, fate })}\n`);
              if (flushed !== undefined) await flushed;
            }
          }
        }
        for (const m of others) {
          const flushed = out.write(`${otherFateLine(m)}\n`);
          if (flushed !== undefined) await flushed;
        }
      }
      if (actions.count > 0) {
        await out.write(ACTIONS_HEAD);
        await copyElements(out, actions.path);
      }
      await out.write((source ? formatAuditSource(source) : formatAuditChain(report, extras.chain)) + formatAuditContent(extras.content));
      await out.end();
    },
    close() {
      finish();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
