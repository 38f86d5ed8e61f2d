import { traceLog } from '../../audit/trace-log.js';
import { fileSource, storeSource } from '../../audit/log-source.js';
import { exportContentAsIs } from '../../projections/telemetry/span-types.js';
import { postOtlpJson } from '../telemetry/otlp-http.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, SessionNotFoundError, reportUsage } from './cli-failure.js';
import type { CliIo } from './io.js';
import { parseFormatOption } from '../../audit/log-format.js';
import { readingFile, readingStore, unreadNotes } from './reading-store.js';

export const TRACE_USAGE = `usage: steerlog trace <log.jsonl> [--format auto|steerlog|dsh] [--otlp <endpoint>] [--content] [--json]
       steerlog trace --store <spec> <session-id> [--otlp <endpoint>] [--content] [--json]
  the session as an OpenTelemetry trace (GenAI conventions: invoke_agent, chat, execute_tool spans; docs/observability.md)
  <log.jsonl>       an envelope log, a JSONL store's stream file, or the harness's own log (plain or zstd)
  --store <spec>    read the session from a store, opened read-only
  --otlp <endpoint> POST the trace as OTLP/JSON to <endpoint>/v1/traces (an OTLP/HTTP receiver); without it, the
                    ExportTraceServiceRequest is printed on stdout as one JSON object
  --content         also export message text, tool arguments and results (never sealed or erased content)
  --json            with --otlp: print {"ok":true,"sessionId","traceId","spans","endpoint"}
exit: 0 exported, 1 the log is invalid, 2 usage or no such session, 3 the store, the file or the endpoint failed`;

/**
 * `steerlog trace`: parses, opens the store read-only, asks the trace use case (`traceLog`, audit/trace-log.ts) and
 * prints the trace as OTLP/JSON or sends it to an endpoint.
 */
export const traceCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'otlp', 'format'], flags: ['json', 'content'] });
  if (!args.ok) return reportUsage(io, TRACE_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  if (args.positionals.length !== 1) return reportUsage(io, TRACE_USAGE, args.positionals.length === 0 ? 'which log?' : 'one log at a time', json);
  const target = args.positionals[0]!;
  const spec = args.strings.store;
  const formatOption = parseFormatOption(args.strings.format);
  if (formatOption === null) return reportUsage(io, TRACE_USAGE, '--format takes auto, steerlog or dsh', json);
  const options = { ...(args.flags.content ? { content: exportContentAsIs } : {}) };
  const outcome =
    spec !== undefined
      ? await readingStore(spec, async (store) => {
          const traced = await traceLog(storeSource(store, target), options);
          if (traced.kind === 'no-such-session') throw new SessionNotFoundError(target, spec);
          return traced;
        }, unreadNotes(io, 'trace'))
      : await readingFile(target, () => traceLog(fileSource(target, formatOption), options));
  if (outcome.kind === 'invalid') {
    const invalid = { code: outcome.code, message: outcome.message };
    if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: invalid })}\n`);
    else io.stderr.write(`steerlog trace: ${invalid.message}\n`);
    return EXIT.invalid;
  }
  const result = outcome.trace;
  const endpoint = args.strings.otlp;
  if (endpoint === undefined) {
    io.stdout.write(`${JSON.stringify(result.request)}\n`);
    return EXIT.ok;
  }
  await postOtlpJson(endpoint, result.request);
  if (json) io.stdout.write(`${JSON.stringify({ ok: true, sessionId: result.sessionId, traceId: result.traceId, spans: result.spans.length, endpoint })}\n`);
  else io.stdout.write(`steerlog trace: ${result.spans.length} spans of session ${result.sessionId ?? '(unnamed)'} (trace ${result.traceId}) sent to ${endpoint}\n`);
  return EXIT.ok;
};
