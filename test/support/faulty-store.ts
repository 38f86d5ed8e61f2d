import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { AppendResult, ExpectedRevision, NewEvent } from '../../runtime/ports/event-store.js';
import { StoreError } from '../../runtime/ports/store-errors.js';

/**
 * A memory store whose appends can be made to fail: before writing (nothing stored), or after writing (stored, but
 * the acknowledgement is lost, as with a dropped connection). Records every append call.
 */
export class FaultyStore extends MemoryEventStore {
  readonly calls: { stream: string; ids: string[]; expected: ExpectedRevision; outcome: 'ok' | 'failed' | 'lost-ack' }[] = [];
  #plan: ('fail' | 'lose-ack')[] = [];
  #gate: Promise<void> | null = null;

  /** The next appends fail, in order. */
  failNext(...plan: ('fail' | 'lose-ack')[]): this {
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
    if (step === 'fail') {
      call.outcome = 'failed';
      throw new StoreError('store-io', 'injected write failure');
    }
    const result = await super.append(stream, events, expected);
    if (step === 'lose-ack') {
      call.outcome = 'lost-ack';
      throw new StoreError('store-io', 'injected lost acknowledgement');
    }
    return result;
  }
}
