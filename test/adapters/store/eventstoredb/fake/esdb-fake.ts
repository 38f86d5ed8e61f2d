/**
 * An in-process EventStoreDB *protocol fake*: a gRPC server hosting the service definitions that
 * `@eventstore/db-client` itself ships (`generated/*_grpc_pb.js`, through `./stubs.js`; the KurrentDB tests swap in
 * `@kurrent/kurrentdb-client`'s stubs of the same protocol), over an in-memory log.
 *
 * It implements just enough of `Streams.Append`, `Streams.BatchAppend`, `Streams.Read` (stream and `$all`
 * reads, stream and `$all` subscriptions with confirmation, catch-up, `caught_up` and live events),
 * `Streams.Delete` and `Streams.Tombstone` (deletions.ts) and `ServerFeatures.GetSupportedMethods` for the real
 * client to run the shared contract suite, the deletion contract included, against it.
 * It is a test double, not a server: see docs/store-eventstoredb.md for everything it does not model.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
// The generated modules are CommonJS whose exports Node's ESM loader cannot list: import them whole.
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import { codePb, featuresGrpc, featuresPb, sharedPb, statusPb, streamsGrpc, streamsPb } from './stubs.js';
import type * as S from '@eventstore/db-client/generated/streams_pb.js';
import { ChangeNotifier } from '../../../../../adapters/store/shared/change-notifier.js';
import { FakeLog } from './fake-log.js';
import { allOrder, filterOf, isStreamRead, readRespOf, requestedOrder, streamName, toProposed, uuidString, type Expected, type Proposed, type StoredEvent } from './wire.js';
import { batchStreamDeletedStatus, deletionHandlers, streamDeletedError } from './deletions.js';
import { faultAnswer, faultCommits, timeoutStatus, type AppendFault } from './append-faults.js';
import { appendLimitError, batchLimitStatus, checkLimits, LIVE_BUFFER, profileLimits, sendsCaughtUp, type FakeLimits, type FakeServerProfile } from './server-profile.js';

const { Any } = anyPb;
const { StreamsService } = streamsGrpc;
const { AppendReq, AppendResp, BatchAppendReq, BatchAppendResp, ReadReq, ReadResp } = streamsPb;
type AppendReq = InstanceType<typeof AppendReq>;
type AppendResp = InstanceType<typeof AppendResp>;
type BatchAppendReq = InstanceType<typeof BatchAppendReq>;
type BatchAppendResp = InstanceType<typeof BatchAppendResp>;
type ReadReq = InstanceType<typeof ReadReq>;
type ReadResp = InstanceType<typeof ReadResp>;
const { AllStreamPosition, Empty, StreamIdentifier, UUID, WrongExpectedVersion } = sharedPb;
type Empty = InstanceType<typeof Empty>;
type StreamIdentifier = InstanceType<typeof StreamIdentifier>;
type UUID = InstanceType<typeof UUID>;
const { Status } = statusPb;
const { Code } = codePb;
const { ServerFeaturesService } = featuresGrpc;
const { SupportedMethod, SupportedMethods } = featuresPb;
type SupportedMethods = InstanceType<typeof SupportedMethods>;

/**
 * - `batch-append`: ServerFeatures advertises Read, Append and BatchAppend (what servers ≥ 21.10 do);
 * - `append-only`: ServerFeatures advertises Read and Append only;
 * - `unimplemented`: no ServerFeatures service at all (the client then assumes an old server).
 */
export type FakeFeatures = 'batch-append' | 'append-only' | 'unimplemented';

export interface FakeEsdbOptions {
  readonly features: FakeFeatures;
  /** Which server version to imitate where versions differ (see server-profile.ts). @defaultValue '24.2' */
  readonly profile?: FakeServerProfile;
  /** Overrides the profile's request limit (the server's `MaxAppendSize` setting). */
  readonly maxAppendSize?: number;
  /**
   * Drop a live subscriber that lags more than 32 events behind (ABORTED "consumer too slow"), as servers do.
   * Off by default: the shared contract suite does not resubscribe. @defaultValue false
   */
  readonly dropSlowSubscribers?: boolean;
  /**
   * How far the server's clock is ahead of the client's, in ms. BatchAppend carries an absolute deadline from the
   * client's clock (now + 10 s): past it by the server's clock, the server answers Timeout at once, writing
   * nothing. (Append uses a relative gRPC timeout, which skew does not affect.) @defaultValue 0
   */
  readonly clockSkewMs?: number;
  /** Refuse `$all` reads and subscriptions as the server does for a user outside `$admins`/`$ops`. @defaultValue false */
  readonly denyAllReads?: boolean;
  /** Overrides the profile's event limit (25.1's `MaxAppendEventSize`; the fake's gRPC server takes 4 MiB messages). */
  readonly maxEventSize?: number;
}

export type FakeRpc = 'Append' | 'BatchAppend' | 'Read' | 'GetSupportedMethods' | 'Delete' | 'Tombstone';

export class FakeEsdb {
  readonly #features: FakeFeatures;
  readonly #profile: FakeServerProfile;
  readonly #limits: FakeLimits;
  readonly #dropSlow: boolean;
  readonly #denyAll: boolean;
  readonly #clockSkewMs: number;
  /** BatchAppend chunk handling is held until this resolves (tests that need a reply to arrive late). */
  #batchGate: Promise<void> | null = null;
  #slowDrops = 0;
  readonly #server = new grpc.Server();
  readonly #log = new FakeLog();
  readonly #calls: Record<FakeRpc, number> = { Append: 0, BatchAppend: 0, Read: 0, GetSupportedMethods: 0, Delete: 0, Tombstone: 0 };
  /** Events written through each append RPC. */
  readonly #appendedVia: Record<'Append' | 'BatchAppend', number> = { Append: 0, BatchAppend: 0 };
  readonly #caughtUpSent = new ChangeNotifier();
  /** Read calls (reads and subscriptions) still open on the server side. */
  #openReads = 0;
  readonly #openReadsChanged = new ChangeNotifier();
  #port = 0;
  /** Faults for the next appends, in order (see append-faults.ts). */
  readonly #faults: (AppendFault | null)[] = [];
  #faultsFired = 0;
  /** Set: the fake is a follower that names this leader; appends that require the leader are refused. */
  #leader: { host: string; port: number } | null = null;
  #requiresLeaderSeen = 0;
  #notLeaderRefusals = 0;
  #limitRefusals = 0;

  constructor(options: FakeEsdbOptions) {
    this.#features = options.features;
    this.#profile = options.profile ?? '24.2';
    this.#dropSlow = options.dropSlowSubscribers ?? false;
    this.#denyAll = options.denyAllReads ?? false;
    this.#clockSkewMs = options.clockSkewMs ?? 0;
    const limits = profileLimits(this.#profile);
    this.#limits = {
      maxAppendSize: options.maxAppendSize ?? limits.maxAppendSize,
      ...(options.maxEventSize ?? limits.maxEventSize) !== undefined ? { maxEventSize: options.maxEventSize ?? limits.maxEventSize } : {},
    };
    this.#server.addService(StreamsService, {
      append: (call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>) =>
        this.#append(call, callback),
      batchAppend: (call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>) => this.#batchAppend(call),
      read: (call: grpc.ServerWritableStream<ReadReq, ReadResp>) => {
        this.#openReads++;
        void this.#read(call).finally(() => {
          this.#openReads--;
          this.#openReadsChanged.notify();
        });
      },
      ...deletionHandlers(this.#log, this.#calls, (metadata) => this.#notLeader(metadata)),
    });
    if (this.#features !== 'unimplemented') {
      this.#server.addService(ServerFeaturesService, {
        getSupportedMethods: (_call: grpc.ServerUnaryCall<Empty, SupportedMethods>, callback: grpc.sendUnaryData<SupportedMethods>) =>
          this.#supportedMethods(callback),
      });
    }
  }

  /** Binds 127.0.0.1 on an ephemeral port. */
  async start(): Promise<void> {
    this.#port = await new Promise<number>((resolve, reject) =>
      this.#server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
  }

  get connectionString(): string {
    return `esdb://127.0.0.1:${this.#port}?tls=false`;
  }

  get port(): number {
    return this.#port;
  }

  /** How many times each RPC was called. */
  get calls(): Readonly<Record<FakeRpc, number>> {
    return { ...this.#calls };
  }

  /** How many events each append RPC wrote. */
  get appendedVia(): Readonly<Record<'Append' | 'BatchAppend', number>> {
    return { ...this.#appendedVia };
  }

  /** How many `caught_up` messages have been sent in total. */
  get caughtUpCount(): number {
    return this.#caughtUpSent.version;
  }

  /** Resolves once `n` `caught_up` messages have been sent in total (for tests that hold the client's buffers full). */
  async caughtUpSent(n: number): Promise<void> {
    while (this.#caughtUpSent.version < n) await this.#caughtUpSent.waitForChange(this.#caughtUpSent.version);
  }

  get openReads(): number {
    return this.#openReads;
  }

  /** Resolves once no Read call (read or subscription) is open on the server side any more. */
  async readsClosed(): Promise<void> {
    while (this.#openReads > 0) await this.#openReadsChanged.waitForChange(this.#openReadsChanged.version);
  }

  /** The next appends (one per append request, either RPC) fail with these faults, in order; `null` lets one pass. */
  injectAppendFaults(...faults: (AppendFault | null)[]): void {
    this.#faults.push(...faults);
  }

  /** How many injected faults have fired. */
  get faultsFired(): number {
    return this.#faultsFired;
  }

  /** Holds every BatchAppend request received from now until `release` resolves (answers then arrive late). */
  holdBatchAppends(release: Promise<void>): void {
    this.#batchGate = release;
    void release.then(() => {
      if (this.#batchGate === release) this.#batchGate = null;
    });
  }

  /** Play a follower: appends sent with `requires-leader` are refused with NotLeader naming `leader`. */
  becomeFollower(leader: { host: string; port: number }): void {
    this.#leader = leader;
  }
  becomeLeader(): void {
    this.#leader = null;
  }
  /** Append calls that carried `requires-leader: true`, and appends refused as NotLeader. */
  get leaderChecks(): { readonly requiresLeader: number; readonly refused: number } {
    return { requiresLeader: this.#requiresLeaderSeen, refused: this.#notLeaderRefusals };
  }

  /** NotLeader as the server says it: status NOT_FOUND with the `not-leader` exception and the leader's endpoint. */
  #notLeader(metadata: grpc.Metadata): Partial<grpc.StatusObject> | null {
    const requires = metadata.get('requires-leader')[0] === 'true';
    if (requires) this.#requiresLeaderSeen++;
    if (!this.#leader || !requires) return null;
    this.#notLeaderRefusals++;
    const trailer = new grpc.Metadata();
    trailer.set('exception', 'not-leader');
    trailer.set('leader-endpoint-host', this.#leader.host);
    trailer.set('leader-endpoint-port', String(this.#leader.port));
    return { code: grpc.status.NOT_FOUND, details: 'Leader info available', metadata: trailer };
  }

  /** How many live subscribers were dropped as too slow. */
  get slowDrops(): number {
    return this.#slowDrops;
  }

  /** How many appends were refused for their size. */
  get limitRefusals(): number {
    return this.#limitRefusals;
  }

  /** Append requests that reached the log (written or refused for their expected revision), with their event counts. */
  get appendSizes(): readonly number[] {
    return this.#log.appendSizes;
  }

  /** Raw stored ESDB event ids of a stream, for white-box tests. */
  storedIds(stream: string): string[] {
    return (this.#log.streams.get(stream) ?? []).map((e) => e.id);
  }

  /** Writes a system event (`$`-typed, in a `$`-stream), like the server's own `$statsCollected` or `$metadata`. */
  writeSystemEvent(stream: string, type: string): void {
    this.#log.commit(stream, [{ id: randomUUID(), type, contentType: 'application/json', data: Buffer.from('{}'), customMetadata: new Uint8Array() }]);
  }

  /**
   * Seeds what a real `$all` holds besides one application's events: a statistics event in a `$stats-` stream,
   * stream metadata (`$metadata` in a `$$` stream), a `$>` link event in a `$ce-` category stream, a tombstone
   * (`$streamDeleted`), and another application's events (JSON and binary, without steerlog's metadata) in a stream
   * named like steerlog's but for its prefix. `ofStream` names a steerlog ESDB stream the links and metadata point at.
   */
  seedForeignEvents(ofStream: string): void {
    const raw = (stream: string, type: string, data: string | Uint8Array, contentType = 'application/json'): void => {
      this.#log.commit(stream, [{ id: randomUUID(), type, contentType, data: typeof data === 'string' ? Buffer.from(data) : data, customMetadata: new Uint8Array() }]);
    };
    raw('$stats-127.0.0.1:2113', '$statsCollected', '{"proc-cpu":1}');
    raw(`$$${ofStream}`, '$metadata', '{"$maxAge":86400}');
    raw(`$ce-${ofStream.split('-')[0]}`, '$>', `0@${ofStream}`);
    raw('orders-7', 'OrderPlaced', '{"sku":"x"}');
    raw('orders-7', 'Blob', new Uint8Array([0xff, 0x00, 0xfe]), 'application/octet-stream');
    raw('orders-8', '$streamDeleted', '{}');
    raw('steerlogx-1', 'NotOurs', '{"looks":"close"}');
  }

  /**
   * Writes `n` events to `stream` as one old-style transaction: each event has its own prepare position and all
   * share the commit position written after them, so commit > prepare. Returns their ESDB ids.
   */
  writeTransaction(stream: string, n: number, type = 'test/tick'): string[] {
    return this.#log.writeTransaction(stream, n, type);
  }

  async stop(): Promise<void> {
    this.#log.notifier.close();
    this.#server.forceShutdown();
  }

  // ---- ServerFeatures ----

  #supportedMethods(callback: grpc.sendUnaryData<SupportedMethods>): void {
    this.#calls.GetSupportedMethods++;
    const methods = new SupportedMethods();
    methods.setEventStoreServerVersion('0.0.0-protocol-fake');
    const names = this.#features === 'batch-append' ? ['read', 'append', 'batchappend'] : ['read', 'append'];
    for (const name of names) {
      const m = new SupportedMethod();
      m.setServiceName('event_store.client.streams.streams');
      m.setMethodName(name);
      methods.addMethods(m);
    }
    callback(null, methods);
  }

  // ---- the log ----

  // ---- Append (client streaming: options, then one proposed message per event) ----

  #append(call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void {
    this.#calls.Append++;
    let options: S.AppendReq.Options | undefined;
    const proposed: Proposed[] = [];
    let failed = false;
    call.on('data', (req: AppendReq) => {
      try {
        if (req.hasOptions()) options = req.getOptions();
        else if (req.hasProposedMessage()) proposed.push(toProposed(req.getProposedMessage()!));
      } catch (e) {
        failed = true;
        callback({ code: grpc.status.INVALID_ARGUMENT, details: String(e) });
      }
    });
    call.on('end', () => {
      if (failed) return;
      if (!options) return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'no options' });
      let expected: Expected;
      if (options.hasRevision()) expected = { kind: 'revision', revision: BigInt(options.getRevision()) };
      else if (options.hasNoStream()) expected = { kind: 'no_stream' };
      else if (options.hasStreamExists()) expected = { kind: 'stream_exists' };
      else expected = { kind: 'any' };
      const notLeader = this.#notLeader(call.metadata);
      if (notLeader) return callback(notLeader);
      const limit = checkLimits(proposed, this.#limits);
      if (limit.kind !== 'ok') {
        this.#limitRefusals++;
        return callback(appendLimitError(limit));
      }
      const fault = this.#faults.shift();
      if (fault !== undefined && fault !== null) {
        this.#faultsFired++;
        if (faultCommits(fault)) this.#log.append(streamName(options.getStreamIdentifier()), expected, proposed);
        const answer = faultAnswer(fault, 'Append');
        // Append has no in-band error: every fault fails the call.
        return callback(answer.kind === 'rpc-error' ? answer.error : { code: grpc.status.ABORTED, details: 'Operation timed out' });
      }
      const outcome = this.#log.append(streamName(options.getStreamIdentifier()), expected, proposed);
      if (!outcome.ok && 'deleted' in outcome) return callback(streamDeletedError(streamName(options.getStreamIdentifier())));
      const resp = new AppendResp();
      if (outcome.ok) {
        this.#appendedVia.Append += proposed.length;
        const success = new AppendResp.Success();
        if (outcome.currentRevision < 0n) success.setNoStream(new Empty());
        else success.setCurrentRevision(outcome.currentRevision.toString());
        const pos = new AppendResp.Position();
        pos.setCommitPosition(outcome.position.toString());
        pos.setPreparePosition(outcome.position.toString());
        success.setPosition(pos);
        resp.setSuccess(success);
      } else {
        const wev = new AppendResp.WrongExpectedVersion();
        if (outcome.current === 'no_stream') wev.setCurrentNoStream(new Empty());
        else wev.setCurrentRevision(outcome.current.toString());
        switch (outcome.expected.kind) {
          case 'any': wev.setExpectedAny(new Empty()); break;
          case 'no_stream': wev.setExpectedNoStream(new Empty()); break;
          case 'stream_exists': wev.setExpectedStreamExists(new Empty()); break;
          case 'revision': wev.setExpectedRevision(outcome.expected.revision.toString()); break;
        }
        resp.setWrongExpectedVersion(wev);
      }
      callback(null, resp);
    });
  }

  // ---- BatchAppend (one long-lived bidi stream; chunks keyed by correlation id, applied on is_final) ----

  #batchAppend(call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void {
    this.#calls.BatchAppend++;
    const pending = new Map<string, { options?: S.BatchAppendReq.Options; proposed: Proposed[] }>();
    let queue: Promise<void> = Promise.resolve();
    call.on('data', (req: BatchAppendReq) => {
      const gate = this.#batchGate;
      // in order, and after the gate when one is set
      queue = queue.then(async () => {
        if (gate) await gate;
        handle(req);
      });
    });
    const handle = (req: BatchAppendReq): void => {
      const correlation = uuidString(req.getCorrelationId());
      const entry = pending.get(correlation) ?? { proposed: [] };
      pending.set(correlation, entry);
      if (req.hasOptions()) entry.options = req.getOptions();
      for (const m of req.getProposedMessagesList()) entry.proposed.push(toProposed(m));
      if (!req.getIsFinal()) return;
      pending.delete(correlation);
      const options = entry.options;
      const resp = new BatchAppendResp();
      const correlationId = new UUID();
      correlationId.setString(correlation);
      resp.setCorrelationId(correlationId);
      if (!options) {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'no options in the first chunk' });
        return;
      }
      resp.setStreamIdentifier(options.getStreamIdentifier());
      let expected: Expected;
      if (options.hasStreamPosition()) expected = { kind: 'revision', revision: BigInt(options.getStreamPosition()) };
      else if (options.hasNoStream()) expected = { kind: 'no_stream' };
      else if (options.hasStreamExists()) expected = { kind: 'stream_exists' };
      else expected = { kind: 'any' };
      const deadline = options.getDeadline();
      if (deadline && deadline.toDate().getTime() < Date.now() + this.#clockSkewMs) {
        resp.setError(timeoutStatus());
        call.write(resp);
        return;
      }
      // A follower ends the whole BatchAppend stream on NotLeader, as the server does.
      const notLeader = this.#notLeader(call.metadata);
      if (notLeader) {
        call.emit('error', notLeader);
        return;
      }
      const limit = checkLimits(entry.proposed, this.#limits);
      if (limit.kind !== 'ok') {
        this.#limitRefusals++;
        resp.setError(batchLimitStatus(limit));
        call.write(resp);
        return;
      }
      const fault = this.#faults.shift();
      if (fault !== undefined && fault !== null) {
        this.#faultsFired++;
        if (faultCommits(fault)) this.#log.append(streamName(options.getStreamIdentifier()), expected, entry.proposed);
        const answer = faultAnswer(fault, 'BatchAppend');
        if (answer.kind === 'rpc-error') {
          call.emit('error', answer.error); // ends the whole bidi stream
          return;
        }
        resp.setError(answer.status);
        call.write(resp);
        return;
      }
      const outcome = this.#log.append(streamName(options.getStreamIdentifier()), expected, entry.proposed);
      if (!outcome.ok && 'deleted' in outcome) {
        resp.setError(batchStreamDeletedStatus(options.getStreamIdentifier()));
        call.write(resp);
        return;
      }
      if (outcome.ok) {
        this.#appendedVia.BatchAppend += entry.proposed.length;
        const success = new BatchAppendResp.Success();
        if (outcome.currentRevision < 0n) success.setNoStream(new Empty());
        else success.setCurrentRevision(outcome.currentRevision.toString());
        const pos = new AllStreamPosition();
        pos.setCommitPosition(outcome.position.toString());
        pos.setPreparePosition(outcome.position.toString());
        success.setPosition(pos);
        resp.setSuccess(success);
      } else {
        const details = new WrongExpectedVersion();
        if (outcome.current === 'no_stream') details.setCurrentNoStream(new Empty());
        else details.setCurrentStreamRevision(outcome.current.toString());
        switch (outcome.expected.kind) {
          case 'any': details.setExpectedAny(new Empty()); break;
          case 'no_stream': details.setExpectedNoStream(new Empty()); break;
          case 'stream_exists': details.setExpectedStreamExists(new Empty()); break;
          case 'revision': details.setExpectedStreamPosition(outcome.expected.revision.toString()); break;
        }
        const any = new Any();
        any.pack(details.serializeBinary(), 'event_store.client.WrongExpectedVersion');
        const status = new Status();
        status.setCode(Code.FAILED_PRECONDITION);
        status.setMessage('WrongExpectedVersion');
        status.setDetails(any);
        resp.setError(status);
      }
      call.write(resp);
    };
    call.on('end', () => void queue.then(() => call.end()));
  }

  // ---- Read (stream and $all reads, subscriptions) ----

  async #read(call: grpc.ServerWritableStream<ReadReq, ReadResp>): Promise<void> {
    this.#calls.Read++;
    const options = call.request.getOptions();
    if (!options) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'no options' });
      return;
    }
    let cancelled = false;
    const stopped = new AbortController();
    call.on('cancelled', () => {
      cancelled = true;
      stopped.abort();
    });
    /** Set in a subscription's live phase: true once the subscriber lags more than the live buffer. */
    let tooSlow: () => boolean = () => false;
    let dropped = false;
    const dropIfTooSlow = (): boolean => {
      if (dropped || !tooSlow()) return dropped;
      dropped = true;
      this.#slowDrops++;
      call.emit('error', { code: grpc.status.ABORTED, details: 'Operation timed out: consumer too slow to handle event while live' });
      stopped.abort();
      return true;
    };
    const send = async (resp: ReadResp): Promise<boolean> => {
      if (cancelled || dropIfTooSlow()) return false;
      if (!call.write(resp)) {
        await new Promise<void>((resolve) => {
          // this wait's own signal: aborted when the transport drains or the call stops, so the watcher below ends
          // with the wait instead of piling one listener per blocked write onto the call's signal
          const waiting = new AbortController();
          const done = (): void => {
            call.off('drain', done);
            stopped.signal.removeEventListener('abort', done);
            waiting.abort();
            resolve();
          };
          call.on('drain', done);
          stopped.signal.addEventListener('abort', done);
          // while the transport is full, new events pile up: past the live buffer, the subscriber is dropped
          void (async () => {
            let v = this.#log.notifier.version;
            while (!waiting.signal.aborted && (await this.#log.notifier.waitForChange(v, waiting.signal))) {
              v = this.#log.notifier.version;
              if (dropIfTooSlow()) return;
            }
          })();
        });
      }
      return !cancelled && !dropped;
    };
    // Before 22.6, events read from a stream carry the maximum value instead of their $all position.
    const maxPositions = isStreamRead(options) && this.#profile === '21.10';
    const sendEvent = (e: StoredEvent): Promise<boolean> => send(readRespOf(e, maxPositions));

    if (!options.hasStream() && this.#denyAll) {
      const trailer = new grpc.Metadata();
      trailer.set('exception', 'access-denied');
      call.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'Access Denied', metadata: trailer });
      return;
    }
    const filter = filterOf(options);
    const isStream = options.hasStream();
    const streamOpts = options.getStream();
    const stream = isStream ? streamName(streamOpts?.getStreamIdentifier()) : '';
    // a stream read shows what a soft delete left (revision r at index r - base); $all shows everything
    const source = (): readonly StoredEvent[] => (isStream ? this.#log.visible(stream) : this.#log.all);
    const base = isStream ? Number(this.#log.truncatedBefore.get(stream) ?? 0n) : 0;
    const tombstoned = (): boolean => isStream && this.#log.tombstoned.has(stream);
    // a read of a tombstoned stream fails: FAILED_PRECONDITION with the stream-deleted trailer (the client's StreamDeletedError)
    if (tombstoned() && !options.hasSubscription()) {
      call.emit('error', streamDeletedError(stream));
      return;
    }

    if (options.hasSubscription()) {
      const confirmation = new ReadResp.SubscriptionConfirmation();
      confirmation.setSubscriptionId(randomUUID());
      const first = new ReadResp();
      first.setConfirmation(confirmation);
      if (!(await send(first))) return;
      if (tombstoned()) {
        call.emit('error', streamDeletedError(stream));
        return;
      }
      // Subscriptions start strictly after the given revision / position.
      let index: number;
      if (isStream) {
        if (streamOpts!.hasStart()) index = 0;
        else if (streamOpts!.hasEnd()) index = source().length;
        else index = Math.max(0, Number(BigInt(streamOpts!.getRevision()) + 1n) - base);
      } else {
        const all = options.getAll()!;
        if (all.hasStart()) index = 0;
        else if (all.hasEnd()) index = this.#log.all.length;
        else {
          const p = all.getPosition()!;
          const after = requestedOrder(p.getCommitPosition(), p.getPreparePosition());
          index = this.#log.all.findIndex((e) => allOrder(e) > after);
          if (index < 0) index = this.#log.all.length;
        }
      }
      let caughtUp = false;
      for (;;) {
        const version = this.#log.notifier.version;
        const events = source();
        while (index < events.length) {
          const e = events[index++]!;
          if (filter(e) && !(await sendEvent(e))) return;
        }
        if (!caughtUp && this.#dropSlow) tooSlow = () => source().length - index > LIVE_BUFFER;
        if (!caughtUp && !sendsCaughtUp(this.#profile)) caughtUp = true;
        if (!caughtUp) {
          caughtUp = true;
          const resp = new ReadResp();
          resp.setCaughtUp(new ReadResp.CaughtUp());
          if (!(await send(resp))) return;
          this.#caughtUpSent.notify();
        }
        if (source().length > index) continue;
        if (!(await this.#log.notifier.waitForChange(version, stopped.signal))) {
          if (!cancelled && !dropped) call.end();
          return;
        }
      }
    }

    const count = options.hasCount() ? BigInt(options.getCount()) : BigInt(Number.MAX_SAFE_INTEGER);
    const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
    const events = source();
    if (isStream && events.length === 0) {
      const nf = new ReadResp.StreamNotFound();
      nf.setStreamIdentifier(streamOpts!.getStreamIdentifier());
      const resp = new ReadResp();
      resp.setStreamNotFound(nf);
      await send(resp);
      if (!cancelled) call.end();
      return;
    }
    let index: number;
    if (isStream) {
      if (streamOpts!.hasStart()) index = backwards ? -1 : 0;
      else if (streamOpts!.hasEnd()) index = backwards ? events.length - 1 : events.length;
      else {
        const rev = Number(BigInt(streamOpts!.getRevision())) - base;
        index = backwards ? Math.min(rev, events.length - 1) : Math.max(0, rev);
      }
    } else {
      const all = options.getAll()!;
      if (all.hasStart()) index = backwards ? -1 : 0;
      else if (all.hasEnd()) index = backwards ? events.length - 1 : events.length;
      else {
        // Forwards from a position includes the event at that position; backwards starts before it.
        const p = all.getPosition()!;
        const at = requestedOrder(p.getCommitPosition(), p.getPreparePosition());
        if (backwards) {
          index = events.length - 1;
          while (index >= 0 && allOrder(events[index]!) >= at) index--;
        } else {
          index = events.findIndex((e) => allOrder(e) >= at);
          if (index < 0) index = events.length;
        }
      }
    }
    let sent = 0n;
    // Snapshot the length: a read returns what was stored when it started.
    const end = events.length;
    while (sent < count && index >= 0 && index < end) {
      const e = events[index]!;
      index += backwards ? -1 : 1;
      if (!filter(e)) continue;
      if (!(await sendEvent(e))) return;
      sent++;
    }
    if (!cancelled) call.end();
  }

}
