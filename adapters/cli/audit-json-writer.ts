import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditReport } from '../../domain/audit.js';
import { auditOutput, fatesById, otherInputs, type ActionSink, type AuditExtras } from '../../audit/audit-extras.js';
import { fateOf } from '../../domain/message-facts.js';
import { type AuditLimit } from '../../audit/audit-limit.js';
import type { AuditStreams } from '../../audit/audit-pass.js';
import type { CliIo } from './io.js';
import { readLineBatches } from '../../audit/read-lines.js';
import { openChildSpool } from './audit-child-spool.js';

// Small enough that a batch of spooled lines or output text dies young (a 1 MiB batch outlives scavenges and is
// promoted to the old generation), large enough that writes stay few.
const FLUSH_CHARS = 64 * 1024;
const READ_BYTES = 64 * 1024;

/**
 * Temporary files of JSON lines that the audit appends its turns, entered messages, actions and children's lists
 * (epochs, reports, settlements: grouped by child when written) to as it decides them, so they are not held in
 * memory until the report is printed. Appends are buffered; `close()` removes the files.
 */
export interface AuditSpool {
  /** Appends one turn (from the fold's `onTurn`). */
  turn(t: AuditReport['turns'][number]): void;
  /** Appends one entered message (from the fold's `onMessage`). */
  message(m: AuditReport['messages'][number]): void;
  /** Takes the extras' actions (the audit's `AuditStreams.actions`). */
  readonly actions: ActionSink;
  /**
   * What the audit hands its turns, entered messages, actions and children's lists to: this spool
   * (`AuditLogOptions.streamTurns`).
   */
  readonly streams: AuditStreams;
  /**
   * Writes `audit --json`'s output to `io` from the spool, the fold's report (open turn only) and the extras (their
   * `actions` empty: the spool took them).
   */
  write(io: CliIo, report: AuditReport, extras: AuditExtras, at: AuditLimit | null): Promise<void>;
  /** Removes the temporary files. */
  close(): void;
}

interface SpoolFile {
  readonly path: string;
  append(line: string): void;
  /** Empties the file (what was appended is forgotten). */
  restart(): void;
  finish(): void;
}

const spoolFile = (path: string): SpoolFile => {
  let fd = openSync(path, 'w');
  let buffer = '';
  let open = true;
  const flush = (): void => {
    if (buffer !== '') writeSync(fd, buffer);
    buffer = '';
  };
  return {
    path,
    append(line) {
      buffer += `${line}\n`;
      if (buffer.length >= FLUSH_CHARS) flush();
    },
    restart() {
      buffer = '';
      if (open) closeSync(fd);
      fd = openSync(path, 'w');
      open = true;
    },
    finish() {
      if (!open) return;
      flush();
      closeSync(fd);
      open = false;
    },
  };
};

/** Writes the spooled lines of `file` to `out` as the elements of a JSON array (without its brackets); resolves their count. */
const writeElements = async (out: ChunkedWriter, file: string): Promise<number> => {
  let n = 0;
  for await (const lines of readLineBatches(file, { chunkBytes: READ_BYTES })) {
    for (const line of lines) {
      const flushed = out.write(n++ === 0 ? line : `,${line}`);
      if (flushed !== undefined) await flushed;
    }
  }
  return n;
};

/** Opens a spool in a fresh temporary directory. */
export const openAuditSpool = (): AuditSpool => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-audit-spool-'));
  const turns = spoolFile(join(dir, 'turns.jsonl'));
  const messages = spoolFile(join(dir, 'messages.jsonl'));
  const actions = spoolFile(join(dir, 'actions.jsonl'));
  const turn = (t: AuditReport['turns'][number]): void => turns.append(JSON.stringify(t));
  const message = (m: AuditReport['messages'][number]): void => messages.append(JSON.stringify(m));
  const actionSink: ActionSink = { push: (a) => actions.append(JSON.stringify(a)), restart: () => actions.restart() };
  const children = openChildSpool(dir);
  return {
    turn,
    message,
    actions: actionSink,
    streams: { onTurn: turn, onMessage: message, actions: actionSink, onChildLists: children.sink },
    async write(io, report, extras, at) {
      turns.finish();
      messages.finish();
      actions.finish();
      const out = chunkedWriter(io);
      // the output's shape with unique markers where the spooled arrays go; every other byte is JSON.stringify's
      const marker = `\u0000steerlog-spool-${dir}`;
      // the children (when the log has any) sit between the turns and the messages
      const withChildren = report.children !== undefined;
      const shape = {
        ...auditOutput(report, { ...extras, fates: [] }, at),
        turns: `${marker}-turns`,
        ...(withChildren ? { children: `${marker}-children` } : {}),
        messages: `${marker}-messages`,
        actions: `${marker}-actions`,
      };
      const text = JSON.stringify(shape);
      const [head, rest] = splitOnce(text, JSON.stringify(`${marker}-turns`));
      const [beforeChildren, afterChildren] = withChildren ? splitOnce(rest, JSON.stringify(`${marker}-children`)) : [rest, ''];
      const [middle, rest2] = splitOnce(withChildren ? afterChildren : rest, JSON.stringify(`${marker}-messages`));
      const [beforeActions, tail] = splitOnce(rest2, JSON.stringify(`${marker}-actions`));
      await out.write(`${head}[`);
      let n = await writeElements(out, turns.path);
      for (const t of report.turns) await out.write(n++ === 0 ? JSON.stringify(t) : `,${JSON.stringify(t)}`);
      if (withChildren) {
        await out.write(`]${beforeChildren}`);
        await children.write(report.children!, (s) => out.write(s));
        await out.write(`${middle}[`);
      } else await out.write(`]${middle}[`);
      const fates = fatesById(extras);
      const shown = new Set<string>();
      n = 0;
      for await (const lines of readLineBatches(messages.path, { chunkBytes: READ_BYTES })) {
        for (const line of lines) {
          const id = spooledMessageId(line);
          shown.add(id);
          // JSON.stringify(enteredMessage(m, fates)) without writing m again: the spooled line is m's own JSON text
          const text = `${line.slice(0, -1)},"fate":${JSON.stringify(fates.get(id) ?? fateOf(id, []))}}`;
          const flushed = out.write(n++ === 0 ? text : `,${text}`);
          if (flushed !== undefined) await flushed;
        }
      }
      for (const m of otherInputs(extras, shown)) await out.write(n++ === 0 ? JSON.stringify(m) : `,${JSON.stringify(m)}`);
      await out.write(`]${beforeActions}[`);
      await writeElements(out, actions.path);
      await out.write(`]${tail}\n`);
      await out.end();
    },
    close() {
      children.close();
      turns.finish();
      messages.finish();
      actions.finish();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const ID_KEY = ',"id":"';

/**
 * The `id` of an entered message from its spooled line (`JSON.stringify` of `{ seq, id, class }`, the auditor's key
 * order) without parsing the line: the text between `,"id":"` and the next quote when it holds no escape, else (an
 * id with a quote, a backslash or a control character, or a line of another shape) `JSON.parse` of the line.
 */
export const spooledMessageId = (line: string): string => {
  if (line.startsWith('{"seq":')) {
    const key = line.indexOf(ID_KEY);
    if (key > 0) {
      const start = key + ID_KEY.length;
      const end = line.indexOf('"', start);
      if (end > 0) {
        const raw = line.slice(start, end);
        if (!raw.includes('\\')) return raw;
      }
    }
  }
  return (JSON.parse(line) as AuditReport['messages'][number]).id;
};

const splitOnce = (text: string, marker: string): [string, string] => {
  const at = text.indexOf(marker);
  if (at < 0 || text.indexOf(marker, at + 1) >= 0) throw new Error('audit output: the spool marker is not unique');
  return [text.slice(0, at), text.slice(at + marker.length)];
};

interface ChunkedWriter {
  /** Appends `s`; a promise only when the buffer was flushed (await it: the stream may ask to wait for `drain`). */
  write(s: string): Promise<void> | undefined;
  end(): Promise<void>;
}

/** Batches writes to `io.stdout` in ~64 KiB chunks, waiting for `drain` when the stream asks for it. */
const chunkedWriter = (io: CliIo): ChunkedWriter => {
  let buffer = '';
  const flush = async (): Promise<void> => {
    if (buffer === '') return;
    const chunk = buffer;
    buffer = '';
    const stdout = io.stdout as CliIo['stdout'] & { once?: (event: 'drain', cb: () => void) => unknown };
    if (stdout.write(chunk) === false && typeof stdout.once === 'function') {
      await new Promise<void>((resolve) => stdout.once!('drain', resolve));
    }
  };
  return {
    // no promise per element: most appends only grow the buffer
    write(s) {
      buffer += s;
      return buffer.length >= FLUSH_CHARS ? flush() : undefined;
    },
    end: flush,
  };
};
