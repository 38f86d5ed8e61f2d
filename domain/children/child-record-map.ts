import { PersistentMap } from '../persistent-map.js';
import { childRecordOf, childRecordParts, type ChildRecord, type ChildRecordParts } from './child-record.js';

/** The record read for each parts object, made the first time it is read (so every read of one version gives one object). */
const recordOfParts = new WeakMap<ChildRecordParts, ChildRecord>();

const recordOf = (parts: ChildRecordParts): ChildRecord => {
  let record = recordOfParts.get(parts);
  if (record === undefined) {
    record = childRecordOf(parts);
    recordOfParts.set(parts, record);
  }
  return record;
};

/**
 * The children fold's map of child records, read as a `ReadonlyMap<string, ChildRecord>`: it holds each child's
 * parts in a persistent map and makes a child's record only when it is read (then the same object at every read of
 * those parts). Setting a child is the persistent map's O(1), with no record built per event: a fold over a log whose
 * children change at every event reads none of the records it passes through.
 */
export class ChildRecordMap implements ReadonlyMap<string, ChildRecord> {
  private constructor(private readonly parts: PersistentMap<string, ChildRecordParts>) {}

  /** An empty map. */
  static empty(): ChildRecordMap {
    return new ChildRecordMap(PersistentMap.empty());
  }

  /** The same records as `children` (a map of records made elsewhere: their parts, O(children) once). */
  static of(children: ReadonlyMap<string, ChildRecord>): ChildRecordMap {
    if (children instanceof ChildRecordMap) return children;
    let parts = PersistentMap.empty<string, ChildRecordParts>();
    for (const [id, record] of children) {
      const p = childRecordParts(record);
      recordOfParts.set(p, record);
      parts = parts.with(id, p);
    }
    return new ChildRecordMap(parts);
  }

  /** The parts of child `id`, or undefined: O(1) on the newest version. */
  partsOf(id: string): ChildRecordParts | undefined {
    return this.parts.get(id);
  }

  /**
   * The map with `parts` as its child's record: O(1) on the newest version. Parts equal by identity to the child's
   * current ones still make a new record (a fold step that sets a child always gives it a new record).
   */
  withParts(parts: ChildRecordParts): ChildRecordMap {
    const next = this.parts.get(parts.childSessionId) === parts ? { ...parts } : parts;
    return new ChildRecordMap(this.parts.with(next.childSessionId, next));
  }

  get size(): number {
    return this.parts.size;
  }
  get(key: string): ChildRecord | undefined {
    const parts = this.parts.get(key);
    return parts === undefined ? undefined : recordOf(parts);
  }
  has(key: string): boolean {
    return this.parts.has(key);
  }
  forEach(callback: (value: ChildRecord, key: string, map: ReadonlyMap<string, ChildRecord>) => void, thisArg?: unknown): void {
    for (const [k, p] of this.parts) callback.call(thisArg, recordOf(p), k, this);
  }
  *entries(): MapIterator<[string, ChildRecord]> {
    for (const [k, p] of this.parts) yield [k, recordOf(p)];
  }
  keys(): MapIterator<string> {
    return this.parts.keys();
  }
  *values(): MapIterator<ChildRecord> {
    for (const p of this.parts.values()) yield recordOf(p);
  }
  [Symbol.iterator](): MapIterator<[string, ChildRecord]> {
    return this.entries();
  }
}
