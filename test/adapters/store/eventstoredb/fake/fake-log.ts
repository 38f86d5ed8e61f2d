/**
 * The protocol fake's in-memory log: streams, the `$all` order, positions, and the expected-revision and id-based
 * idempotency rules of an append. No gRPC here.
 */
import { randomUUID } from 'node:crypto';
import { ChangeNotifier } from '../../../../../adapters/store/shared/change-notifier.js';
import { POSITION_GAP, TICKS_PER_MS, TOMBSTONE_REVISION, type AppendOutcome, type DeleteOutcome, type Expected, type Proposed, type StoredEvent } from './wire.js';

export class FakeLog {
  readonly streams = new Map<string, StoredEvent[]>();
  /** Every event in `$all` order. */
  readonly all: StoredEvent[] = [];
  /** Notified on every commit (live subscriptions wait on it). */
  readonly notifier = new ChangeNotifier();
  /** Event counts of the append requests that reached the log. */
  readonly appendSizes: number[] = [];
  /** Tombstoned (hard-deleted) streams: reads answer "stream deleted", appends and deletes are refused. */
  readonly tombstoned = new Set<string>();
  /** Soft-deleted streams: stream reads show only revisions from here on (the `$tb` a soft delete sets). */
  readonly truncatedBefore = new Map<string, bigint>();
  /** Real logs start far from 0: a commit position of 2^40 (1 TiB of log) is ordinary. */
  #nextPosition = 1n << 40n;

  current(stream: string): bigint | 'no_stream' {
    const events = this.streams.get(stream);
    return events && events.length > 0 ? events[events.length - 1]!.revision : 'no_stream';
  }

  /** The stream's current revision as writers see it: `no_stream` for a soft-deleted stream not written since. */
  shown(stream: string): bigint | 'no_stream' {
    const current = this.current(stream);
    const soft = this.truncatedBefore.get(stream);
    return current !== 'no_stream' && soft !== undefined && current < soft ? 'no_stream' : current;
  }

  /** The stream's events a stream read shows: all of them, but for those a soft delete truncated. */
  visible(stream: string): readonly StoredEvent[] {
    const events = this.streams.get(stream) ?? [];
    const before = this.truncatedBefore.get(stream);
    return before === undefined ? events : events.slice(Number(before));
  }

  /**
   * Delete (`hard: false`) or Tombstone (`hard: true`), as EventStoreDB documents them: a tombstoned stream refuses
   * (stream deleted) whatever the expected revision; otherwise the expected revision must match as for an append.
   * Neither removes anything from `$all` (only a scavenge would: the fake never scavenges). A tombstone appends the
   * `$streamDeleted` event (in the stream itself, at revision int64 max) to `$all` and retires the id; a soft delete
   * writes `{"$tb": last + 1}` as `$metadata` in the `$$` stream, so stream reads show nothing until the next append,
   * which continues the numbering (the stream is re-created).
   */
  delete(stream: string, expected: Expected, hard: boolean): DeleteOutcome {
    if (this.tombstoned.has(stream)) return { ok: false, deleted: true };
    const current = this.current(stream);
    const shown = this.shown(stream);
    const matches =
      expected.kind === 'any' ||
      (expected.kind === 'no_stream' && shown === 'no_stream') ||
      (expected.kind === 'stream_exists' && shown !== 'no_stream') ||
      (expected.kind === 'revision' && shown === expected.revision);
    if (!matches) return { ok: false, current: shown, expected };
    if (!hard) {
      const last = current === 'no_stream' ? -1n : current;
      this.truncatedBefore.set(stream, last + 1n);
      const e = this.commit(`$$${stream}`, [
        { id: randomUUID(), type: '$metadata', contentType: 'application/json', data: Buffer.from(JSON.stringify({ $tb: Number(last + 1n) })), customMetadata: new Uint8Array() },
      ]);
      return { ok: true, position: e.position };
    }
    this.tombstoned.add(stream);
    this.#nextPosition += POSITION_GAP;
    const created = (BigInt(Date.now()) * TICKS_PER_MS).toString();
    const tombstone: StoredEvent = { stream, streamBytes: Buffer.from(stream, 'utf8'), id: randomUUID(), revision: TOMBSTONE_REVISION, position: this.#nextPosition, prepare: this.#nextPosition, type: '$streamDeleted', contentType: 'application/octet-stream', created, data: new Uint8Array(), customMetadata: new Uint8Array() };
    this.all.push(tombstone);
    this.notifier.notify();
    return { ok: true, position: tombstone.position };
  }

  /**
   * Expected-revision check and id-based idempotency, as EventStoreDB documents them:
   * - an exact revision (or `no_stream`, i.e. -1) equal to the current one writes;
   * - an exact revision *behind* the current one is an idempotent success when the events stored right after it
   *   carry the batch's ids in order; when only the first matches it is a wrong expected version;
   * - `any` / `stream_exists`: if the first id is already in the stream, the following stored events must carry
   *   the following ids (idempotent success), otherwise wrong expected version; if the first id is new, it writes.
   * The real server looks `any` ids up in a bounded cache of recent writes; the fake scans the whole stream.
   */
  append(stream: string, expected: Expected, proposed: Proposed[]): AppendOutcome {
    this.appendSizes.push(proposed.length);
    if (this.tombstoned.has(stream)) return { ok: false, deleted: true };
    const events = this.streams.get(stream) ?? [];
    // a soft-deleted stream takes `no_stream` again; its next event continues the numbering
    const current = this.shown(stream);
    const currentNum = current === 'no_stream' ? -1n : current;
    const idempotentFrom = (start: number): AppendOutcome | null => {
      if (proposed.length === 0) return null;
      for (let i = 0; i < proposed.length; i++) {
        if (events[start + i]?.id !== proposed[i]!.id) return { ok: false, current, expected };
      }
      const last = events[start + proposed.length - 1]!;
      return { ok: true, currentRevision: last.revision, position: last.position };
    };
    switch (expected.kind) {
      case 'no_stream':
      case 'revision': {
        const want = expected.kind === 'no_stream' ? -1n : expected.revision;
        if (want === currentNum) break;
        if (want < currentNum && proposed.length > 0 && events[Number(want + 1n)]?.id === proposed[0]!.id) {
          return idempotentFrom(Number(want + 1n))!;
        }
        return { ok: false, current, expected };
      }
      case 'stream_exists':
      case 'any': {
        if (expected.kind === 'stream_exists' && current === 'no_stream') return { ok: false, current, expected };
        const first = proposed.length > 0 ? events.findIndex((e) => e.id === proposed[0]!.id) : -1;
        if (first >= 0) return idempotentFrom(first)!;
        break;
      }
    }
    if (proposed.length === 0) {
      const last = events[events.length - 1];
      return { ok: true, currentRevision: currentNum, position: last?.position ?? 0n };
    }
    const last = this.commit(stream, proposed);
    return { ok: true, currentRevision: last.revision, position: last.position };
  }

  commit(stream: string, proposed: Proposed[]): StoredEvent {
    let events = this.streams.get(stream);
    if (!events) {
      events = [];
      this.streams.set(stream, events);
    }
    const streamBytes = Buffer.from(stream, 'utf8');
    const created = (BigInt(Date.now()) * TICKS_PER_MS).toString();
    let last: StoredEvent | undefined;
    for (const p of proposed) {
      this.#nextPosition += POSITION_GAP + BigInt(p.data.length);
      last = { stream, streamBytes, id: p.id, revision: BigInt(events.length), position: this.#nextPosition, prepare: this.#nextPosition, type: p.type, contentType: p.contentType, created, data: p.data, customMetadata: p.customMetadata };
      events.push(last);
      this.all.push(last);
    }
    this.notifier.notify();
    return last!;
  }

  /**
   * Writes `n` events to `stream` as one old-style transaction: each event has its own prepare position and all
   * share the commit position written after them, so commit > prepare. Returns their ESDB ids.
   */
  writeTransaction(stream: string, n: number, type = 'test/tick'): string[] {
    let events = this.streams.get(stream);
    if (!events) {
      events = [];
      this.streams.set(stream, events);
    }
    const streamBytes = Buffer.from(stream, 'utf8');
    const created = (BigInt(Date.now()) * TICKS_PER_MS).toString();
    const prepares: bigint[] = [];
    for (let i = 0; i < n; i++) prepares.push((this.#nextPosition += POSITION_GAP));
    const commit = (this.#nextPosition += POSITION_GAP);
    const ids: string[] = [];
    for (const prepare of prepares) {
      const id = randomUUID();
      const e: StoredEvent = { stream, streamBytes, id, revision: BigInt(events.length), position: commit, prepare, type, contentType: 'application/json', created, data: Buffer.from('{}'), customMetadata: new Uint8Array() };
      events.push(e);
      this.all.push(e);
      ids.push(id);
    }
    this.notifier.notify();
    return ids;
  }
}
