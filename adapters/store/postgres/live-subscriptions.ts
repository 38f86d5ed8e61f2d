/**
 * The PostgreSQL store's live subscriptions: catch-up then live over a ChangeNotifier that is bumped by this
 * process's appends, by NOTIFY on a dedicated LISTEN connection (other processes' appends), and by a poll timer
 * (the fallback when a notification is lost). The timer and the connection run only while subscriptions are open.
 */
import pg from 'pg';
import type { ClientConfig } from 'pg';
import type { SubscriptionMessage } from '../../../runtime/ports/event-store.js';
import { isStoreClosedError } from '../../../runtime/ports/store-errors.js';
import { catchUpThenLive, type CatchUpSource } from '../shared/catch-up.js';
import type { ChangeNotifier } from '../shared/change-notifier.js';
import type { StoreContext } from './store-context.js';

/** How subscriptions learn of new events (the store's `listen`, `listenConnection`, `pollIntervalMs` and `onBackgroundError` options). */
export interface LiveOptions {
  /** Open a LISTEN connection; when false, subscriptions rely on polling alone. */
  readonly listen: boolean;
  /** Connection settings of the LISTEN connection. */
  readonly listenConnection: ClientConfig | undefined;
  /** Interval of the poll timer, and the delay before reconnecting a lost LISTEN connection. */
  readonly pollIntervalMs: number;
  /** Told of the LISTEN connection's failures. */
  readonly onBackgroundError: (e: unknown) => void;
}

/** The subscriptions of one store and what wakes them: the poll timer and the LISTEN connection. */
export class LiveSubscriptions {
  readonly #ctx: StoreContext;
  readonly #notifier: ChangeNotifier;
  readonly #options: LiveOptions;
  #subscribers = 0;
  #pollTimer: NodeJS.Timeout | undefined;
  #listener: pg.Client | undefined;
  #listenerStarting: Promise<void> | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;

  /** `notifier` is the store's: appends bump it too, and the store closes it. */
  constructor(ctx: StoreContext, notifier: ChangeNotifier, options: LiveOptions) {
    this.#ctx = ctx;
    this.#notifier = notifier;
    this.#options = options;
  }

  /**
   * Catch-up then live from `source` after `start`, watching for changes while it runs. Ends quietly when the store
   * closes under it.
   */
  async *follow(source: CatchUpSource, start: bigint | null, signal: AbortSignal | undefined): AsyncGenerator<SubscriptionMessage> {
    this.#subscribers++;
    try {
      // Listen before the first read: a commit after the read's snapshot then always bumps the notifier.
      await this.#startWatching();
      yield* catchUpThenLive(source, this.#notifier, start, signal);
    } catch (e) {
      if (this.#ctx.isClosed() && isStoreClosedError(e)) return;
      throw e;
    } finally {
      this.#subscribers--;
      if (this.#subscribers === 0) this.#stopPolling();
    }
  }

  /** Stops the timers and ends the LISTEN connection; called by the store's `close()` once it is marked closed. */
  async close(): Promise<void> {
    this.#stopPolling();
    if (this.#reconnectTimer !== undefined) clearTimeout(this.#reconnectTimer);
    await this.#listenerStarting?.catch(() => undefined);
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  async #startWatching(): Promise<void> {
    if (this.#pollTimer === undefined && !this.#ctx.isClosed()) {
      this.#pollTimer = setInterval(() => this.#notifier.notify(), this.#options.pollIntervalMs);
      this.#pollTimer.unref();
    }
    if (!this.#options.listen || this.#listener || this.#ctx.isClosed()) return;
    this.#listenerStarting ??= this.#connectListener().finally(() => {
      this.#listenerStarting = undefined;
    });
    await this.#listenerStarting;
  }

  #stopPolling(): void {
    if (this.#pollTimer !== undefined) clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  async #connectListener(): Promise<void> {
    const client = new pg.Client(this.#options.listenConnection);
    client.on('notification', () => this.#notifier.notify());
    client.on('error', (e) => {
      this.#options.onBackgroundError(e);
      this.#dropListener(client);
    });
    try {
      await client.connect();
      await client.query(this.#ctx.sql.listen);
    } catch (e) {
      this.#options.onBackgroundError(e);
      await client.end().catch(() => undefined);
      this.#scheduleReconnect();
      return; // subscriptions carry on with polling
    }
    if (this.#ctx.isClosed()) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#listener = client;
    // Whatever was committed while nobody listened is picked up by one more read.
    this.#notifier.notify();
  }

  #dropListener(client: pg.Client): void {
    if (this.#listener === client) this.#listener = undefined;
    client.end().catch(() => undefined);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#ctx.isClosed() || this.#reconnectTimer !== undefined || this.#subscribers === 0) return;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (!this.#ctx.isClosed() && this.#subscribers > 0 && !this.#listener) void this.#startWatching().catch(this.#options.onBackgroundError);
    }, this.#options.pollIntervalMs);
    this.#reconnectTimer.unref();
  }
}
