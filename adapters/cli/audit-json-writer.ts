import { mkdtempSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditReport } from '../../domain/audit.js';
import { auditOutput, fatesById, otherInputs, type ActionSink, type AuditExtras } from '../../audit/audit-extras.js';
import { fateOf, type InputFate } from '../../domain/input-fate.js';
import { type AuditLimit } from '../../audit/audit-limit.js';
import type { AuditStreams } from '../../audit/audit-pass.js';
import type { CliIo } from './io.js';
import { chunkedWriter, copyElements } from './chunked-writer.js';
import { readLineBatches } from '../../audit/read-lines.js';
import { openChildSpool } from './audit-child-spool.js';
import { actionSpool, plainJsonString } from './audit-action-spool.js';
import { spoolFileHandle } from './spool-file-handle.js';

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

/** A temporary file the audit's writers append to as the audit decides (appends buffered). */
export interface SpoolFile {
  readonly path: string;
  /** How many elements were appended since the file was opened or restarted. */
  readonly count: number;
  append(line: string): void;
  /** Appends `text` to the element appended last (its continuation: no separator, not counted). */
  extend(text: string): void;
  /** Empties the file (what was appended is forgotten). */
  restart(): void;
  finish(): void;
}

/**
 * A spool file of JSON texts: one per line (`separator` `'\n'`: read back line by line), or joined by `','` — the
 * elements of a JSON array as the output writes them, copied out verbatim without being split into lines again —
 * or of texts appended as they are (`''`: lines of the human report, each with its own newline).
 */
export const spoolFile = (path: string, separator: '\n' | ',' | '' = '\n'): SpoolFile => {
  const file = spoolFileHandle(path);
  let buffer = '';
  let count = 0;
  const flush = (): void => {
    if (buffer !== '') writeSync(file.fd, buffer);
    buffer = '';
  };
  return {
    path,
    get count() {
      return count;
    },
    append:
      separator === ''
        ? (text) => {
            count++;
            buffer += text;
            if (buffer.length >= FLUSH_CHARS) flush();
          }
        : separator === '\n'
        ? (line) => {
            count++;
            buffer += `${line}\n`;
            if (buffer.length >= FLUSH_CHARS) flush();
          }
        : (line) => {
            buffer += count++ === 0 ? line : `,${line}`;
            if (buffer.length >= FLUSH_CHARS) flush();
          },
    extend(text) {
      buffer += text;
      if (buffer.length >= FLUSH_CHARS) flush();
    },
    restart() {
      count = 0;
      buffer = '';
      file.restart();
    },
    finish() {
      if (!file.open) return;
      flush();
      file.close();
    },
  };
};

/** A string or null as JSON: a short plain string quoted as it is (what `JSON.stringify` writes), any other through `JSON.stringify`. */
const jsonOrNull = (s: string | null): string => (s === null ? 'null' : s.length <= 64 && plainJsonString(s) ? `"${s}"` : JSON.stringify(s));

/** Opens a spool in a fresh temporary directory. */
export const openAuditSpool = (): AuditSpool => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-audit-spool-'));
  // the turns and actions are copied out verbatim, the messages read back line by line (each gets its fate)
  const turns = spoolFile(join(dir, 'turns.json'), ',');
  const messages = spoolFile(join(dir, 'messages.jsonl'));
  const actions = actionSpool(join(dir, 'actions.json'));
  const turn = (t: AuditReport['turns'][number]): void => appendTurn(turns, t);
  const message = (m: AuditReport['messages'][number]): void => messages.append(JSON.stringify(m));
  const actionSink: ActionSink = { push: (a) => actions.push(a), pushPart: (e, kind, id, turn) => actions.pushPart(e, kind, id, turn), restart: () => actions.restart() };
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
      await copyElements(out, turns.path);
      let n = turns.count;
      for (const t of report.turns) {
        if (n++ > 0) await out.write(',');
        for (const piece of turnJsonPieces(t)) await out.write(piece);
      }
      if (withChildren) {
        await out.write(`]${beforeChildren}`);
        await children.write(report.children!, (s) => out.write(s));
        await out.write(`${middle}[`);
      } else await out.write(`]${middle}[`);
      const fateJson = fateTexts(fatesById(extras));
      const shown = new Set<string>();
      n = 0;
      for await (const lines of readLineBatches(messages.path, { chunkBytes: READ_BYTES })) {
        for (const line of lines) {
          const id = spooledMessageId(line);
          shown.add(id);
          // JSON.stringify(enteredMessage(m, fates)) without writing m again: the spooled line is m's own JSON text
          const text = `${line.slice(0, -1)},"fate":${fateJson(id)}}`;
          const flushed = out.write(n++ === 0 ? text : `,${text}`);
          if (flushed !== undefined) await flushed;
        }
      }
      for (const m of otherInputs(extras, shown)) await out.write(n++ === 0 ? JSON.stringify(m) : `,${JSON.stringify(m)}`);
      await out.write(`]${beforeActions}[`);
      await copyElements(out, actions.path);
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

/** How many fates' JSON texts {@link fateTexts} holds at most (a few MiB). */
const FATE_TEXTS = 16 * 1024;

/**
 * `JSON.stringify` of each input's fate (`fates.get(id)`, or the empty fate of an id the facts never saw), written
 * once per id and reused: every entered message of an id shows the same fate (its input's last life), and a log
 * whose ids are admitted again and again enters each many times. The texts held are capped at `limit` (then
 * forgotten and written again as asked), so memory stays flat however many ids the log has.
 */
export const fateTexts = (fates: ReadonlyMap<string, InputFate>, limit = FATE_TEXTS): ((id: string) => string) => {
  const texts = new Map<string, string>();
  return (id) => {
    let text = texts.get(id);
    if (text === undefined) {
      text = JSON.stringify(fates.get(id) ?? fateOf(id, []));
      if (texts.size >= limit) texts.clear();
      texts.set(id, text);
    }
    return text;
  };
};

/** A turn claiming more ids than this is written in pieces, its `claimed` array id by id. */
const PIECES_FROM = 1024;
const CLAIMED_KEY = ',"claimed":[]';

/**
 * `JSON.stringify(t)` in pieces, in order: a turn of many claims as its record without its ids, then its ids a few
 * at a time, then the rest of the record, so a turn of hundreds of thousands of claims is never one string of
 * them all (a turn of few claims is one piece).
 */
export function* turnJsonPieces(t: AuditReport['turns'][number]): Generator<string> {
  const claimed = t.claimed;
  if (claimed.length <= PIECES_FROM) return yield JSON.stringify(t);
  // the record's JSON with its `claimed` emptied: the first `,"claimed":[]` is its key (a string value's quotes are escaped)
  const text = JSON.stringify({ ...t, claimed: [] });
  const key = text.indexOf(CLAIMED_KEY);
  if (key < 0) return yield JSON.stringify(t);
  const at = key + CLAIMED_KEY.length - 1;
  yield text.slice(0, at);
  let piece = '';
  for (let i = 0; i < claimed.length; i++) {
    piece += i === 0 ? jsonOrNull(claimed[i]!) : `,${jsonOrNull(claimed[i]!)}`;
    if (piece.length >= FLUSH_CHARS) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}${text.slice(at)}`;
}

/** Appends `JSON.stringify(t)` to `file` as one element, in pieces ({@link turnJsonPieces}). */
const appendTurn = (file: SpoolFile, t: AuditReport['turns'][number]): void => appendPieces(file, turnJsonPieces(t));

/** Appends one element to `file` given as pieces (their join): the first appended, the rest extending it. */
export const appendPieces = (file: SpoolFile, pieces: Iterable<string>): void => {
  let first = true;
  for (const piece of pieces) {
    if (first) file.append(piece);
    else file.extend(piece);
    first = false;
  }
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
