import { defaultKeyStoreSpec, openKeyStore } from '../keys/open-key-store.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { once } from 'node:events';
import { createHostObservability } from '../http/observability.js';
import { createOtelTelemetry, type OtelTelemetry } from '../telemetry/otel-telemetry.js';
import { isOtlpProtocol, OTLP_PROTOCOLS } from '../telemetry/otlp-exporter.js';
import { withSessionTraceIds } from '../telemetry/trace-log-fields.js';
import { startHttpServer, isHostConfigError } from '../http/server.js';
import { Host } from '../../host/host.js';
import { largestImageBytes, PROMPT_ROOM_BYTES, type PromptLimits } from '../../host/prompt.js';
import { localOwnership, type SessionOwnership } from '../../host/ports/ownership.js';
import { createRuntime } from '../../runtime/runtime.js';
import { LoopSlices } from '../../runtime/loop-slices.js';
import { ChildManager } from '../../runtime/children/child-manager.js';
import { childTools } from '../../runtime/children/child-tools.js';
import { consoleLogger, jsonLinesLogger, logAt, type Logger } from '../../runtime/logger.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { DEFAULT_STORE_SPEC, openStore } from '../store/open-store.js';
import { derivedCacheOf } from '../store/derived-cache-of.js';
import type { CliIo } from './io.js';
import { parseCommandArgs } from './cli-args.js';
import { reportFailure, reportUsage, UsageError } from './cli-failure.js';
import type { BearerToken } from '../http/auth.js';
import { isTokenFileError, readTokenFile } from './token-file.js';
import { ModelSpecError, openModel, readModelKeyFile } from './serve-model.js';
import { batchedLines } from './batched-lines.js';
import { serveChainOptions } from './serve-chain-options.js';
import { isSigningKeyError } from '../../formats/chain/ed25519.js';
import { storeConsolePorts } from '../http/console-ports.js';
import { type ServeProjections } from './serve-projections.js';
import { startObservedServeProjections } from './serve-projections-observed.js';

export const SERVE_USAGE = `usage: steerlog serve [options]
  --store <spec>          where sessions live: jsonl:<dir> | postgres://… | memory:   (default ${DEFAULT_STORE_SPEC})
  --host <address>        interface to bind (default 127.0.0.1; anything else needs a token)
  --port <n>              port (default 7420; 0 picks a free one)
  --token <secret>        bearer token clients must send (or STEERLOG_TOKEN)
  --principal <name>      the actor recorded on everything done with the token (default operator; needs a token)
  --token-file <path>     several tokens, one name:token per line: each request's actor is its token's name
  --model <spec>          echo | openai:<model> | anthropic:<model> | module:<path>   (default echo; openai reads
                          OPENAI_BASE_URL, OPENAI_API_KEY; anthropic needs @anthropic-ai/sdk, reads ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)
  --model-base-url <url>  the openai:/anthropic: endpoint (instead of OPENAI_BASE_URL / ANTHROPIC_BASE_URL)
  --model-key-file <path> a file holding the provider's API key (instead of OPENAI_API_KEY / ANTHROPIC_API_KEY)
  --body-limit <bytes>    largest request body (default 1048576)
  --max-image-bytes <n>   largest image in a prompt (default: the largest the body and event limits carry, 774144
                          with the defaults; its base64 and 16 KiB for the rest of the prompt must fit both)
  --cors <origins>        comma-separated origins allowed by CORS (default: CORS off); any other Origin is refused 403
  --allowed-hosts <names> comma-separated names (name or name:port) answered besides loopback: the Host a reverse
                          proxy forwards, the name browsers use for the console (default none)
  --reference-frames      claim-time queue frames: a steering row leaves at its claim (no steering handoff)
  --host-id <id>          this host's name in leases (PostgreSQL; default a random id)
  --advertise <url>       the URL other hosts' clients are sent to (default the listening URL)
  --lease-ms <n>          lease time of a session on PostgreSQL (default 10000)
  --write-batch-ms <n>    write-behind window of every session (default 200)
  --log-format <f>        json (default): one JSON object per line on stderr (time, level, msg, requestId,
                          sessionId, traceId, …); text: plain lines
  --otlp <endpoint>       export every session's spans live to an OTLP/HTTP receiver (<endpoint>/v1/traces; needs the
                          optional @opentelemetry/* packages; no message content; docs/observability.md)
  --otlp-protocol <p>     http/protobuf (default: the SDK's protobuf encoding costs less CPU per span and sends
                          fewer bytes than its JSON) | http/json
  --otlp-priority <p>     low (default): the export worker thread runs under SCHED_IDLE (Linux, through chrt; else
                          nice 19), so the runtime's threads never wait for it and the export runs on spare CPU (lag
                          in bounded queues) | normal: the process's priority
  --encrypt               store content and tool payloads encrypted, so that steerlog erase can erase them (keys in
                          <dir>/keys.json for jsonl:<dir>, in the steerlog_data_keys table for postgres://…)
  --keys <spec>           --encrypt with the data keys there: file:<path> | postgres://…
  --signing-key <pem>     sign a chain/head at every checkpoint with this Ed25519 private key (or STEERLOG_SIGNING_KEY)
  --pubkey <pem>[,<pem>…] public keys the console checks signed chain heads with (as steerlog verify --pubkey)
  --projection <module>[,<module>…]  run these projections' workers in the host process (as steerlog project
                          <module> --follow: same checkpoints, leases and partitions); GET /projections reports
                          their lag and state (guarded like /metrics)
  --projection-checkpoints <spec>  where they keep checkpoints (default: as steerlog project --follow)
  --projection-partitions <n>      their partitions (default 1)
  --projection-failure <policy>    stop (default) | park | retry:<n>[:park|:stop]`;

/** How long a log line of `steerlog serve` may wait for the lines after it before they are written together, ms. */
const SERVE_LOG_DELAY_MS = 20;

const intOption = (value: string | undefined, name: string, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
};

/**
 * `--max-image-bytes`: by default the largest image the body and event limits carry; a larger one is refused, since
 * no prompt could ever reach it (it would fail the body limit with 413, or the event limit, first).
 */
const imageLimit = (value: string | undefined, limits: PromptLimits): number => {
  const carried = largestImageBytes(limits);
  const n = intOption(value, 'max-image-bytes', carried);
  if (n > carried) {
    throw new UsageError(
      `--max-image-bytes ${n} cannot be reached: an image travels and is stored as base64 (4/3 of its bytes), with ${PROMPT_ROOM_BYTES} bytes for the rest of the prompt, within --body-limit (${limits.bodyLimitBytes}) and the store's event limit (${limits.maxEventBytes}${limits.sealed ? ', sealed' : ''}); at most ${carried}`,
    );
  }
  return n;
};

/**
 * `steerlog serve`: the Host over HTTP on the given store (default the embedded JSONL store), until SIGINT/SIGTERM
 * (or `stop`). Prints the URL on its first line of output. On PostgreSQL, sessions are leased per host, so several
 * `serve` processes can share one database.
 */
export const serveCommand = async (argv: readonly string[], io: CliIo, stop?: AbortSignal): Promise<number> => {
  const args = parseCommandArgs(argv, {
    strings: ['store', 'host', 'port', 'token', 'token-file', 'principal', 'model', 'model-base-url', 'model-key-file', 'body-limit', 'max-image-bytes', 'cors', 'allowed-hosts', 'host-id', 'advertise', 'lease-ms', 'write-batch-ms', 'keys', 'otlp', 'otlp-protocol', 'otlp-priority', 'log-format', 'signing-key', 'pubkey', 'projection', 'projection-checkpoints', 'projection-partitions', 'projection-failure'],
    flags: ['reference-frames', 'help', 'encrypt'],
  });
  if (args.ok && args.flags['help']) {
    io.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  if (!args.ok || args.positionals.length > 0) {
    return reportUsage(io, SERVE_USAGE, args.ok ? `unexpected ${args.positionals[0]}` : args.error);
  }
  const v = args.strings;
  const token = v.token ?? process.env['STEERLOG_TOKEN'];
  if (v['token-file'] !== undefined && (v.token !== undefined || v.principal !== undefined)) {
    return reportUsage(io, SERVE_USAGE, '--token-file names every token and its principal: not with --token or --principal');
  }
  // the principal is the actor recorded on everything done with the token: one that records nobody is refused
  if (v.principal !== undefined && v.principal.trim() === '') return reportUsage(io, SERVE_USAGE, '--principal must name who the token acts for');
  if (v.principal !== undefined && !token && v['token-file'] === undefined) {
    return reportUsage(io, SERVE_USAGE, '--principal names the token\'s principal: it needs --token or STEERLOG_TOKEN (without one every request is local)');
  }
  let tokens: BearerToken[] = token ? [{ principal: v.principal ?? 'operator', token }] : [];
  const spec = v.store ?? DEFAULT_STORE_SPEC;
  let store: EventStore | null = null;
  let keys: KeyStore | null = null;
  let ownership: SessionOwnership;
  let telemetry: OtelTelemetry | undefined;
  let projections: ServeProjections | null = null;
  const logFormat = v['log-format'] ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'text') return reportUsage(io, SERVE_USAGE, '--log-format takes json or text');
  const otlpProtocol = v['otlp-protocol'] ?? 'http/protobuf';
  if (!isOtlpProtocol(otlpProtocol)) return reportUsage(io, SERVE_USAGE, `--otlp-protocol takes ${OTLP_PROTOCOLS.join(' or ')}`);
  if (v['otlp-protocol'] !== undefined && v.otlp === undefined) return reportUsage(io, SERVE_USAGE, '--otlp-protocol needs --otlp <endpoint>');
  const otlpPriority = v['otlp-priority'] ?? 'low';
  if (otlpPriority !== 'normal' && otlpPriority !== 'low') return reportUsage(io, SERVE_USAGE, '--otlp-priority takes normal or low');
  if (v['otlp-priority'] !== undefined && v.otlp === undefined) return reportUsage(io, SERVE_USAGE, '--otlp-priority needs --otlp <endpoint>');
  // log lines (requests, warnings) are written together, at most 20 ms after the first of them (or once 64 Ki
  // characters wait), not one write each: under load a write per turn of the event loop still woke the reader of
  // stderr a thousand times a second. What waits is written at shutdown, on a failure and when the process exits.
  const stderrLines = batchedLines((chunk) => io.stderr.write(chunk), { maxDelayMs: SERVE_LOG_DELAY_MS });
  process.on('exit', stderrLines.flush);
  const logger: Logger = logFormat === 'json' ? withSessionTraceIds(jsonLinesLogger({ write: (line) => stderrLines.line(line.endsWith('\n') ? line.slice(0, -1) : line) })) : consoleLogger;
  try {
    const port = intOption(v.port, 'port', 7420);
    const bodyLimitBytes = intOption(v['body-limit'], 'body-limit', 1024 * 1024);
    const leaseMs = intOption(v['lease-ms'], 'lease-ms', 10_000);
    const writeBatchDelayMs = intOption(v['write-batch-ms'], 'write-batch-ms', 200);
    if (v['token-file'] !== undefined) tokens = await readTokenFile(v['token-file']);
    const apiKey = v['model-key-file'] !== undefined ? await readModelKeyFile(v['model-key-file']) : undefined;
    const { model, acceptsImages, setup } = await openModel(v.model ?? 'echo', process.env, {
      ...(v['model-base-url'] !== undefined ? { baseUrl: v['model-base-url'] } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
    });
    const chain = serveChainOptions(v['signing-key'], v.pubkey);
    store = await openStore(spec);
    if (args.flags.encrypt === true || v.keys !== undefined) {
      const keySpec = v.keys ?? defaultKeyStoreSpec(spec);
      if (keySpec === null) throw new Error(`--encrypt: ${redact(spec)} has no default key store; name one with --keys`);
      keys = await openKeyStore(keySpec);
    }
    const hostId = v['host-id'] ?? `host-${globalThis.crypto.randomUUID().slice(0, 8)}`;
    // continuable children: the model tools (send_message, interrupt_agent, list_agents, report) and the subagent.* routes
    let children!: ChildManager;
    telemetry = v.otlp !== undefined ? await createOtelTelemetry({ endpoint: v.otlp, protocol: otlpProtocol, exportPriority: otlpPriority }) : undefined;
    if (telemetry !== undefined) {
      const { thread, policy, note } = telemetry.exportScheduling;
      logAt(logger, note === undefined ? 'info' : 'warn', `telemetry: the OTLP export runs on the ${thread} thread, scheduled ${policy}${note === undefined ? '' : ` (${note})`}`, { otlpPriority, exportPolicy: policy });
    }
    // a cold session resumes from its latest fold snapshot: its agent holds its log from there (docs/store-jsonl.md)
    // the sessions' turns and the prompts' admissions share the event loop in slices (runtime/loop-slices.ts), the
    // admissions first: a receipt does not queue behind the checkpoints of every running turn; 2 ms of them per turn
    // of the loop (not the default 4): the longest holds of the loop under load fall by about 3 ms of the main
    // thread's time at the same admissions/s (docs/benchmarks.md, issue 35 part 3, "Ninth pass")
    const slices = new LoopSlices({ budgetMs: 2 });
    const runtime = createRuntime({ store, model, writeBatchDelayMs, logger, resumeFromSnapshots: true, turnGate: slices, tools: childTools(() => children), ...(keys ? { encryption: { keys } } : {}), ...(telemetry ? { telemetry } : {}), ...(chain.signer ? { signer: chain.signer } : {}) });
    children = new ChildManager({ runtime, logger });
    const holder: { url?: string } = {};
    if (/^postgres(ql)?:\/\//.test(spec)) {
      const { openPostgresOwnership } = await import('../lease/postgres-ownership.js');
      ownership = await openPostgresOwnership({ url: spec, hostId, leaseMs, advertise: () => v.advertise ?? holder.url });
    } else ownership = localOwnership(hostId);
    const maxImageBytes = imageLimit(v['max-image-bytes'], { bodyLimitBytes, maxEventBytes: runtime.maxEventBytes, sealed: keys !== null });
    const host = new Host({ runtime, ownership, children, modelAcceptsImages: acceptsImages, maxImageBytes, admissionGate: slices.first, referenceFrames: args.flags['reference-frames'] === true, logger, ...(setup ? { onSession: (agent) => setup(agent, { children }) } : {}) });
    const observability = createHostObservability(host, { sharedLeases: /^postgres(ql)?:\/\//.test(spec), ...(telemetry ? { telemetryStats: telemetry.stats } : {}) });
    if (v.projection !== undefined) {
      projections = await startObservedServeProjections(
        {
          modules: v.projection.split(',').map((m) => m.trim()).filter(Boolean),
          store,
          storeSpec: spec,
          logger,
          ...(v['projection-checkpoints'] !== undefined ? { checkpoints: v['projection-checkpoints'] } : {}),
          ...(v['projection-partitions'] !== undefined ? { partitions: v['projection-partitions'] } : {}),
          ...(v['projection-failure'] !== undefined ? { failure: v['projection-failure'] } : {}),
        },
        observability,
        telemetry,
      );
    }
    const server = await startHttpServer({
      host,
      tokens,
      observability,
      projections,
      bodyLimitBytes,
      port,
      ...(v.host !== undefined ? { hostname: v.host } : {}),
      ...(v.cors ? { corsOrigins: v.cors.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      ...(v['allowed-hosts'] ? { allowedHosts: v['allowed-hosts'].split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      ...(logFormat === 'json' ? { logger } : { log: stderrLines.line }),
      console: { keys, ports: storeConsolePorts(store, { verifiers: chain.verifiers, keys }), derivedCache: await derivedCacheOf(store) },
    });
    holder.url = server.url;
    io.stdout.write(`steerlog serve: listening on ${server.url} (store ${redact(spec)}, model ${v.model ?? 'echo'}, host ${hostId})\n`);
    const ac = new AbortController();
    const onSignal = () => ac.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    stop?.addEventListener('abort', onSignal, { once: true });
    if (!ac.signal.aborted) await once(ac.signal, 'abort');
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    observability.close();
    await projections?.close();
    projections = null;
    await host.close();
    await server.close();
    stderrLines.flush();
    return 0;
  } catch (e) {
    // a bad option value or token file is a usage error (2); a store or model that cannot be opened, a port in use: 3
    // the lines logged before the failure come before its report
    stderrLines.flush();
    return reportFailure(io, 'serve', isHostConfigError(e) || e instanceof ModelSpecError || isTokenFileError(e) || isSigningKeyError(e) ? new UsageError(e.message) : e, false);
  } finally {
    await projections?.close().catch(() => {});
    await telemetry?.shutdown().catch(() => {});
    await store?.close().catch(() => {});
    await keys?.close().catch(() => {});
    // the closes above may log too
    stderrLines.flush();
    process.off('exit', stderrLines.flush);
  }
};

/** A store spec without its password. */
const redact = (spec: string): string => spec.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
