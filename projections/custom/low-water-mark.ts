/**
 * The contiguous low-water mark of processed positions: the highest position P such that every position that was
 * begun at or before P has completed. Positions must be begun in increasing order (the source's order); they may
 * complete in any order. A checkpoint committed at `mark` can therefore never pass an unprocessed event.
 */
export class LowWaterMark {
  readonly #inFlight: bigint[] = [];
  readonly #done = new Set<bigint>();
  #mark: bigint | null;
  #lastBegun: bigint | null;

  constructor(start: bigint | null = null) {
    this.#mark = start;
    this.#lastBegun = start;
  }

  /** The highest position with nothing unprocessed at or before it, or null when none (or the start). */
  get mark(): bigint | null {
    return this.#mark;
  }

  /** Positions begun and not yet passed by the mark. */
  get pending(): number {
    return this.#inFlight.length;
  }

  begin(position: bigint): void {
    if (this.#lastBegun !== null && position <= this.#lastBegun) {
      throw new RangeError(`position ${position} begun after ${this.#lastBegun}: positions must increase`);
    }
    this.#lastBegun = position;
    this.#inFlight.push(position);
  }

  complete(position: bigint): void {
    if (!this.#inFlight.includes(position) || this.#done.has(position)) throw new RangeError(`position ${position} is not in flight`);
    this.#done.add(position);
    while (this.#inFlight.length > 0 && this.#done.has(this.#inFlight[0]!)) {
      const head = this.#inFlight.shift()!;
      this.#done.delete(head);
      this.#mark = head;
    }
  }
}
