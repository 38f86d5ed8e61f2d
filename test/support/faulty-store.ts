import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { AppendResult, ExpectedRevision, NewEvent } from '../../runtime/ports/event-store.js';
import { ConcurrencyError, StoreError, UnknownOutcomeError } from '../../runtime/ports/store-errors.js';

/**
 * What the next append does:
 * - `fail`: nothing is written, a plain `store-io` error;
 * - `lose-ack`: written, then a plain `store-io` error (a store that does not know its outcome is unknown);
 * - `unknown-after-commit` / `unknown-before-commit`: `UnknownOutcomeError`, written or not.
 */
export type FaultyStep = 'fail' | 'lose-ack' | 'unknown-after-commit' | 'unknown-before-commit';

/**
 * A memory store whose appends can be made to fail: before writing (nothing stored), or after writing (stored, but
 * the acknowledgement is lost, as with a dropped connection). Records every append call. With `revisionFirst`, it
 * checks the expected revision before the ids (as a server may), so a retried grown batch gets `ConcurrencyError`.
 */
export class FaultyStore extends MemoryEventStore {
  readonly calls: { stream: string; ids: string[]; expected: ExpectedRevision; outcome: 'ok' | 'failed' | 'lost-ack' }[] = [];
  #plan: FaultyStep[] = [];
  revisionFirst = false;
  #gate: Promise<void> | null = null;

  /** The next appends fail, in order. */
  failNext(...plan: FaultyStep[]): this {
    this.#plan.push(...plan);
    return this;
  }
  /** Holds every append until `release` resolves. */
  hold(release: Promise<void>): this {
    this.#gate = release;
    return this;
  }

  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.#gate) await this.#gate;
    const step = this.#plan.shift();
    const call = { stream, ids: events.map((e) => e.id), expected, outcome: 'ok' as 'ok' | 'failed' | 'lost-ack' };
    this.calls.push(call);
    if (step === 'fail' || step === 'unknown-before-commit') {
      call.outcome = 'failed';
      if (step === 'fail') throw new StoreError('store-io', 'injected write failure');
      throw new UnknownOutcomeError(stream, events.length, 'injected: nothing written');
    }
    if (this.revisionFirst && typeof expected === 'bigint') {
      const actual = await this.revision(stream);
      if (actual !== expected) throw new ConcurrencyError(stream, expected, actual);
    }
    const result = await super.append(stream, events, expected);
    if (step === 'lose-ack' || step === 'unknown-after-commit') {
      call.outcome = 'lost-ack';
      if (step === 'lose-ack') throw new StoreError('store-io', 'injected lost acknowledgement');
      throw new UnknownOutcomeError(stream, events.length, 'injected: written, answer lost');
    }
    return result;
  }
}
