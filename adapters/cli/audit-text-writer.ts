import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fatesById, otherInputs, type ActionSink } from '../../audit/audit-extras.js';
import { formatAuditContent } from '../../audit/audit-content.js';
import { formatAuditSource, withSourceError } from '../../audit/dsh-audit.js';
import { readLineBatches } from '../../audit/read-lines.js';
import type { AuditReport } from '../../domain/audit.js';
import { fateOf } from '../../domain/input-fate.js';
import { appendPieces, spoolFile, type AuditSpool } from './audit-json-writer.js';
import { chunkedWriter, copyElements } from './chunked-writer.js';
import { auditReportConsumed, auditReportHead, auditReportPending, childLine, epochLine, messageLine, REPORTS_AT, SETTLEMENTS_AT, turnTextPieces, type PrintableAuditReport } from './format-audit.js';
import { openChildSpool, type ChildSpool } from './audit-child-spool.js';
import { ACTIONS_HEAD, actionLine, formatAuditChain, OTHER_FATES_HEAD, otherFateLine } from './format-audit-extras.js';

const READ_BYTES = 64 * 1024;

/**
 * The spool of the human `audit` report (without `--json`): the closed turns and the actions go to temporary files
 * as their lines, the entered messages as JSON lines (each is looked up by id once the fates are known), as the
 * audit decides them, so the report is printed from them instead of being held whole. The children's epochs, reports
 * and settlements go to a child spool as they are decided (as their lines and seqs, grouped by child when printed
 * after the pending lists), so a busy child's history is not held either. The output is exactly the
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
  // the children's epochs as their lines, reports and settlements as their seqs (joined on one line when printed)
  const children = openChildSpool(dir, { texts: { epoch: epochLine, report: (m) => String(m.seq), settlement: (m) => String(m.seq) } });
  const finish = (): void => {
    turns.finish();
    messages.finish();
    actions.finish();
  };
  return {
    turn,
    message,
    actions: actionSink,
    streams: { onTurn: turn, onMessage: message, actions: actionSink, onChildLists: children.sink },
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
      await writeTail(printable, children, (text) => out.write(text));
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
      children.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/**
 * `auditReportTail(report)` as the report would print it had the fold kept the children's lists: the lines before
 * the children, each child's lines from the spool (its epochs, its reports' and settlements' seqs on one line
 * each), then the lines after them.
 */
const writeTail = async (report: PrintableAuditReport, children: ChildSpool, out: (text: string) => Promise<void> | undefined): Promise<void> => {
  let flushed = out(`${auditReportPending(report).join('\n')}\n`);
  if (flushed !== undefined) await flushed;
  const records = report.children;
  if (records) {
    flushed = out('\nchildren:\n');
    if (flushed !== undefined) await flushed;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      flushed = out(`${childLine(record)}\n`);
      if (flushed !== undefined) await flushed;
      for (const line of children.texts(record, i, 'epochs')) {
        flushed = out(`${line}\n`);
        if (flushed !== undefined) await flushed;
      }
      for (const [list, head] of [['reports', REPORTS_AT], ['settlements', SETTLEMENTS_AT]] as const) {
        let n = 0;
        for (const seq of children.texts(record, i, list)) {
          flushed = out(n++ === 0 ? `${head}${seq}` : `, ${seq}`);
          if (flushed !== undefined) await flushed;
        }
        if (n > 0) {
          flushed = out('\n');
          if (flushed !== undefined) await flushed;
        }
      }
    }
  }
  await out(auditReportConsumed(report).join('\n'));
};
