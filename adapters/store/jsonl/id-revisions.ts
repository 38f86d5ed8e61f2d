/**
 * The lock holder's index of a stream's event ids, for idempotent appends: which revision holds an id. A long
 * stream's ids as strings in a `Map` cost about 80 bytes each (a 500,000-event stream: about 40 MiB of heap); this
 * keeps a 32-bit hash of each id beside its revision, 8 bytes a slot at a load between a quarter and a half (16 to
 * 32 bytes an id). A hash names candidates, never an answer: the caller confirms a candidate by reading the committed line
 * at its revision (commit-appends.ts), which happens only when an appended id's hash is already present (a retried
 * batch, or one collision in about 2^32 / ids lookups).
 */

/** The 32-bit FNV-1a hash of a string's UTF-16 code units. */
export const idHash = (id: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/** The smallest table, in slots (a power of two). */
const MIN_SLOTS = 16;

/** A stream's ids by revision, as hashes: an open-addressing table (linear probing), grown at a load of a half. */
export class IdRevisions {
  /** Each slot's id hash (meaningful where `#revs` is not 0). */
  #hashes = new Uint32Array(MIN_SLOTS);
  /** Each slot's revision + 1; 0 for an empty slot. */
  #revs = new Int32Array(MIN_SLOTS);
  #count = 0;

  /** How many ids are held. */
  get size(): number {
    return this.#count;
  }

  /** The bytes the table takes (its two typed arrays). */
  get bytes(): number {
    return this.#hashes.byteLength + this.#revs.byteLength;
  }

  /** Records that revision `rev` holds `id` (each revision once; a stream's ids are distinct). */
  set(id: string, rev: number): void {
    if ((this.#count + 1) * 2 > this.#revs.length) this.#grow();
    this.#put(idHash(id), rev + 1);
    this.#count++;
  }

  /** The revisions whose id has the hash of `id`, in no particular order: `id`'s revision is among them when it is held. */
  candidates(id: string): number[] {
    const h = idHash(id);
    const mask = this.#revs.length - 1;
    const out: number[] = [];
    for (let i = h & mask; this.#revs[i] !== 0; i = (i + 1) & mask) if (this.#hashes[i] === h) out.push(this.#revs[i]! - 1);
    return out;
  }

  #put(h: number, revPlusOne: number): void {
    const mask = this.#revs.length - 1;
    let i = h & mask;
    while (this.#revs[i] !== 0) i = (i + 1) & mask;
    this.#hashes[i] = h;
    this.#revs[i] = revPlusOne;
  }

  #grow(): void {
    const hashes = this.#hashes;
    const revs = this.#revs;
    this.#hashes = new Uint32Array(revs.length * 2);
    this.#revs = new Int32Array(revs.length * 2);
    for (let i = 0; i < revs.length; i++) if (revs[i] !== 0) this.#put(hashes[i]!, revs[i]!);
  }
}
