import { writeSync } from 'node:fs';
import type { ActorAction, ActorActionKind } from '../../domain/actor-actions.js';
import { recordedActor, type ActorKind } from '../../domain/event-metadata.js';
import type { LogEvent } from '../../domain/events.js';
import { spoolFileHandle } from './spool-file-handle.js';

/** The bytes held before they are written: what a text spool holds in characters (audit-json-writer.ts). */
const SPOOL_BYTES = 64 * 1024;
/** An action that could need more bytes than this (very long ids or actors) is written as its string. */
const ACTION_BYTES = 8 * 1024;

/**
 * The actions of `audit --json` spooled to a file as the elements of its `actions` array, joined by `','`: each
 * action's `JSON.stringify` text, encoded straight into a byte buffer as the audit
 * decides it (one per admission or cancel of the log: no string of the action, no string of the buffered batch,
 * no conversion of that string back to bytes when it is written). Read back with `copyElements`.
 */
export interface ActionSpool {
  readonly path: string;
  /** How many actions were appended since the file was opened or restarted. */
  readonly count: number;
  /** Appends one action. */
  push(action: ActorAction): void;
  /**
   * Appends the action of `event` given as its parts (`eachActorActionPart`): the same bytes as `push` of the action
   * `actorActionsOf` builds from them, without the action object.
   */
  pushPart(event: LogEvent, kind: ActorActionKind, id: string | null, turn: number | null): void;
  /** Empties the file (what was appended is forgotten). */
  restart(): void;
  /** Writes what is held and closes the file. */
  finish(): void;
}

/** Constant runs of at least this many bytes are copied with `set`, shorter ones byte by byte. */
const SET_FROM = 16;

/** 10^8: the numbers below it are written in 32-bit integer arithmetic. */
const LOW = 100_000_000;

/** The ASCII bytes of a key or a constant of the action's JSON text. */
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const SEQ = ascii('{"seq":');
const TIME = ascii(',"time":');
const TURN = ascii(',"turn":');
const ACTOR = ascii(',"actor":');
const ACTOR_KIND = ascii(',"actorKind":');
const NULL = ascii('null');
/** Every kind of action. */
const KINDS: readonly ActorActionKind[] = ['created', 'forked', 'admitted', 'edited', 'moved', 'canceled', 'stopped', 'woke', 'erased'];
/** `,"kind":"<kind>","id":` for each kind (a kind outside them is written by `JSON.stringify`). */
const KIND_TO_ID: ReadonlyMap<string, Uint8Array> = new Map(KINDS.map((k) => [k, ascii(`,"kind":"${k}","id":`)]));
/** The text after the id of an action whose turn, actor and actor kind are null. */
const NULL_TAIL = ascii(',"turn":null,"actor":null,"actorKind":null}');

/** Is `JSON.stringify(s)` `s` between quotes: no quote, backslash, control character or surrogate in it? */
export const plainJsonString = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
};

/** An action spool writing `path` (created or emptied). */
export const actionSpool = (path: string): ActionSpool => {
  const file = spoolFileHandle(path);
  let count = 0;
  const bytes = Buffer.allocUnsafe(SPOOL_BYTES);
  let at = 0;
  // the text up to the kind (`{"seq":…,"time":…`) of the action written last: the actions of one event (the
  // admissions of a splice, say) share it, so it is copied from there instead of written digit by digit again (NaN:
  // none in the buffer)
  let headSeq = Number.NaN;
  let headTime = Number.NaN;
  let headAt = 0;
  let headLength = 0;
  const flush = (): void => {
    if (at > 0) writeSync(file.fd, bytes, 0, at);
    at = 0;
    // (the head written last is no longer in the buffer)
    headSeq = Number.NaN;
  };
  const put = (b: Uint8Array): void => {
    // a long run as one copy (`set`), a short one byte by byte (a call to `set` costs more than a few stores)
    if (b.length >= SET_FROM) bytes.set(b, at);
    else for (let i = 0; i < b.length; i++) bytes[at + i] = b[i]!;
    at += b.length;
  };
  /** A number as `JSON.stringify` writes it: a safe integer digit by digit, any other through `String`. */
  const number = (n: number): void => {
    if (!Number.isSafeInteger(n) || Object.is(n, -0)) {
      at += bytes.write(JSON.stringify(n), at, 'latin1');
      return;
    }
    if (n < 0) {
      bytes[at++] = 0x2d;
      n = -n;
    }
    // a time in milliseconds has 13 digits: its last 8 and the rest apart, each in 32-bit integer arithmetic
    if (n < LOW) return small(n, 0);
    const high = Math.floor(n / LOW);
    small(high, 0);
    small(n - high * LOW, 8);
  };
  /** `n` (0 ≤ n < 10^8) in decimal, padded with zeros to `width` digits. */
  const small = (value: number, width: number): void => {
    // an int32 from here on (a remainder of a double would be a floating-point one)
    let n = value | 0;
    let digits = 1;
    for (let m = n; m >= 10; m = (m / 10) | 0) digits++;
    if (digits < width) digits = width;
    for (let i = at + digits - 1; i >= at; i--) {
      bytes[i] = 0x30 + (n % 10);
      n = (n / 10) | 0;
    }
    at += digits;
  };
  /** A string or null as `JSON.stringify` writes it (a plain string between quotes, any other escaped by it). */
  const string = (s: string | null): void => {
    if (s === null) return put(NULL);
    // printable ASCII without a quote or a backslash (an id, an actor: nearly always) byte by byte
    const start = at;
    bytes[at++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c >= 0x80 || c === 0x22 || c === 0x5c) {
        at = start;
        return anyString(s);
      }
      bytes[at++] = c;
    }
    bytes[at++] = 0x22;
  };
  /** Any other string: encoded as UTF-8, escaped by `JSON.stringify` if it must be. */
  const anyString = (s: string): void => {
    const text = plainJsonString(s) ? s : JSON.stringify(s).slice(1, -1);
    bytes[at++] = 0x22;
    at += bytes.write(text, at, 'utf8');
    bytes[at++] = 0x22;
  };
  /** The most bytes `string(s)` can take: 6 per UTF-16 unit escaped (`\u0000`), else 3 per unit in UTF-8, and the quotes. */
  const most = (s: string | null): number => (s === null ? 4 : s.length * 6 + 2);
  /** One action's JSON text, from its fields (in `ActorAction`'s key order). */
  const write = (seq: number, time: number, kind: ActorActionKind, id: string | null, turn: number | null, actor: string | null, actorKind: ActorKind | null): void => {
    // the fixed keys and two numbers (at most 24 bytes each) take under 128 bytes; the strings their most
    const need = 128 + kind.length + most(id) + most(actor) + most(actorKind);
    const kindToId = KIND_TO_ID.get(kind);
    if (need > ACTION_BYTES || kindToId === undefined) {
      flush();
      const a: ActorAction = { seq, time, kind, id, turn, actor, actorKind };
      writeSync(file.fd, `${count++ === 0 ? '' : ','}${JSON.stringify(a)}`);
      return;
    }
    if (at + need > SPOOL_BYTES) flush();
    if (count++ > 0) bytes[at++] = 0x2c;
    if (seq === headSeq && time === headTime) {
      bytes.copyWithin(at, headAt, headAt + headLength);
      at += headLength;
    } else {
      const head = at;
      put(SEQ);
      number(seq);
      put(TIME);
      number(time);
      // (only a head written digit by digit, a safe integer's, is kept: any other number goes through JSON.stringify)
      if (Number.isSafeInteger(seq) && Number.isSafeInteger(time)) {
        headSeq = seq;
        headTime = time;
        headAt = head;
        headLength = at - head;
      } else headSeq = Number.NaN;
    }
    // a kind is one of a fixed set of plain ASCII words: its key, the word and the next key as one run of bytes
    put(kindToId);
    string(id);
    if (turn === null && actor === null && actorKind === null) {
      // (an action without a turn or an actor, most of a log's: the rest of its text is one run of bytes)
      put(NULL_TAIL);
      return;
    }
    put(TURN);
    if (turn === null) put(NULL);
    else number(turn);
    put(ACTOR);
    string(actor);
    put(ACTOR_KIND);
    string(actorKind);
    bytes[at++] = 0x7d;
  };
  return {
    path,
    get count() {
      return count;
    },
    push(a) {
      write(a.seq, a.time, a.kind, a.id, a.turn, a.actor, a.actorKind);
    },
    pushPart(event, kind, id, turn) {
      const by = recordedActor(event.metadata);
      write(event.seq, event.time, kind, id, turn, by.actor, by.actorKind);
    },
    restart() {
      count = 0;
      at = 0;
      headSeq = Number.NaN;
      file.restart();
    },
    finish() {
      if (!file.open) return;
      flush();
      file.close();
    },
  };
};
