import { parseFormatOption } from '../../audit/log-format.js';
import type { Agent } from '../../runtime/agent.js';
import type { Tool } from '../../runtime/tools.js';
import { isNotReplayableError } from '../replay/recorded-log.js';
import { replayCheck, type ReplayCheckResult } from '../replay/replay-check.js';
import { isReplayPointError, replaySession, type ReplayPoint, type ReplaySessionResult } from '../replay/replay-from.js';
import { openStore } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { UsageError } from './cli-failure.js';
import type { CliIo } from './io.js';
import { loadUserModule } from './load-module.js';
import { readingLog } from './reading-log.js';
import { isModelSpecError, openModel } from './serve-model.js';

export const REPLAY_USAGE = `usage: steerlog replay <log.jsonl> --check [--hooks <module>] [--tools <module>] [--keys <spec>] [--json]
       steerlog replay --store <spec> <session-id> --check [--hooks <module>] [--tools <module>] [--keys <spec>] [--json]
       steerlog replay --store <spec> <session-id> --from <seq | turn.step> --model <spec> [--tools <module>]
                       [--recorded-tools] [--hooks <module>] [--session <new-id>] [--model-base-url <url>] [--json]
  --check           re-drive today's runtime with the recorded answers, tool outcomes, retry decisions, clock and
                    ids, re-admit the recorded inputs where they arrived, and compare the events it produces with
                    the stored ones; names the first event that differs, with both versions
  --from <point>    fork the session at the turn that holds this seq or step, answer the requests before the point
                    from the recording, make every later one to --model (echo | openai:<model> | anthropic:<model> |
                    module:<path>), and re-admit the recorded inputs at their points of the turn structure: a new
                    session (fork of the origin) in the same store, ready for steerlog diff
  --tools <module>  tools whose code runs (exports tools: Tool[], or a default array); with --check, instead of
                    answering their calls from the recorded outcomes (a changed tool checked against the recording)
  --recorded-tools  answer the other tool calls from the recorded results (else such a call fails)
  --hooks <module>  installs the deployment's hooks and plugins (exports install(agent), or a default function)
  --keys <spec>     the data keys of sealed content (default with --store: the key store that goes with it)
exit: 0 reproduced (--check) or replayed (--from), 1 the replay differs from the recording or the log is invalid,
      2 usage, no such session or step, or a log a replay cannot drive (sealed content without its key, erased
        content, the reference harness's logs),
      3 the store or file could not be read or written`;

/** What `steerlog replay --check --json` prints. */
export type ReplayCheckOutput = { readonly format: 'steerlog-replay-check'; readonly version: 1; readonly session: string } & ReplayCheckResult;
/** What `steerlog replay --from --json` prints. */
export type ReplayFromOutput = { readonly format: 'steerlog-replay'; readonly version: 1 } & Omit<ReplaySessionResult, 'events'> & { readonly events: number };

const parsePoint = (value: string): ReplayPoint | null => {
  const step = /^(\d+)\.(\d+)$/.exec(value);
  if (step) return { turn: Number(step[1]), step: Number(step[2]) };
  return /^\d+$/.test(value) ? { seq: Number(value) } : null;
};

const hooksOf = async (path: string | undefined): Promise<((agent: Agent) => void) | undefined> => {
  if (path === undefined) return undefined;
  const mod = await loadUserModule(path);
  const install = mod['install'] ?? mod['default'];
  if (typeof install !== 'function') throw new UsageError(`--hooks ${path}: the module exports no install(agent) function`);
  return install as (agent: Agent) => void;
};

const toolsOf = async (path: string | undefined): Promise<readonly Tool<Agent>[] | undefined> => {
  if (path === undefined) return undefined;
  const mod = await loadUserModule(path);
  const tools = mod['tools'] ?? mod['default'];
  if (!Array.isArray(tools)) throw new UsageError(`--tools ${path}: the module exports no tools array`);
  return tools as Tool<Agent>[];
};

const line = (value: unknown): string => (value === null ? 'nothing' : JSON.stringify(value));

/** The human answer of a check. */
export const formatReplayCheck = (session: string, r: ReplayCheckResult): string => {
  if (r.ok) return `reproduced: today's runtime writes the ${r.events} events of ${session} as recorded\n`;
  const d = r.divergence;
  return [
    `differs at seq ${d.seq} (${d.type}): the first ${d.seq} events are reproduced`,
    `  recorded: ${line(d.recorded)}`,
    `  produced: ${d.produced === null ? `nothing (the runtime waited for ${d.waiting ?? 'nothing'})` : line(d.produced)}`,
    '',
  ].join('\n');
};

/** `steerlog replay`: a replay check of a log, or a counterfactual replay of a stored session. */
export const replayCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'format', 'keys', 'from', 'model', 'tools', 'hooks', 'session', 'model-base-url'], flags: ['check', 'json', 'recorded-tools'] });
  if (!args.ok) throw new UsageError(args.error);
  const json = args.flags.json === true;
  const { store } = args.strings;
  if (args.positionals.length !== 1) throw new UsageError(store !== undefined ? 'replay --store <spec> needs one session id' : 'replay needs one log file');
  const target = args.positionals[0]!;
  const check = args.flags.check === true;
  if (check === (args.strings.from !== undefined)) throw new UsageError('replay takes either --check or --from <seq | turn.step>');
  const install = await hooksOf(args.strings.hooks);
  if (check) {
    for (const option of ['model', 'session', 'model-base-url'] as const) if (args.strings[option] !== undefined) throw new UsageError(`--${option} is for replay --from, not --check`);
    if (args.flags['recorded-tools'] === true) throw new UsageError('--recorded-tools is for replay --from (--check answers every call from the recording unless --tools runs it)');
    const checkedTools = await toolsOf(args.strings.tools);
    const format = parseFormatOption(args.strings.format);
    if (format === null) throw new UsageError('--format takes auto, steerlog or dsh');
    const loaded = await readingLog({ target, format, ...(store !== undefined ? { store } : {}), ...(args.strings.keys !== undefined ? { keys: args.strings.keys } : {}) });
    if (loaded.error !== null) {
      const message = `the log is invalid at seq ${loaded.error.seq ?? '?'} (${loaded.error.message}): a replay reproduces valid logs only`;
      if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'invalid-log', message } })}\n`);
      else io.stderr.write(`steerlog replay: ${message}\n`);
      return 1;
    }
    let result: ReplayCheckResult;
    try {
      result = await replayCheck(loaded.events, { ...(install ? { install } : {}), ...(checkedTools ? { tools: checkedTools } : {}) });
    } catch (e) {
      if (!isNotReplayableError(e)) throw e;
      const code = e.invalidAt !== null ? 'invalid-log' : e.code;
      if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code, message: e.message } })}\n`);
      else io.stderr.write(`steerlog replay: ${e.message}\n`);
      return e.invalidAt !== null ? 1 : 2;
    }
    const session = store !== undefined ? target : ((loaded.events[0]?.data as { sessionId?: string } | undefined)?.sessionId ?? target);
    const output: ReplayCheckOutput = { format: 'steerlog-replay-check', version: 1, session, ...result };
    io.stdout.write(json ? `${JSON.stringify(output)}\n` : formatReplayCheck(session, result));
    return result.ok ? 0 : 1;
  }
  if (store === undefined) throw new UsageError('replay --from needs --store <spec> (the new session is written there)');
  const from = parsePoint(args.strings.from!);
  if (from === null) throw new UsageError(`--from takes a seq or turn.step, not "${args.strings.from}"`);
  if (args.strings.model === undefined) throw new UsageError('replay --from needs --model <spec>');
  let model;
  try {
    model = (await openModel(args.strings.model, process.env, args.strings['model-base-url'] !== undefined ? { baseUrl: args.strings['model-base-url'] } : {})).model;
  } catch (e) {
    if (isModelSpecError(e)) throw new UsageError(e.message);
    throw e;
  }
  const tools = await toolsOf(args.strings.tools);
  const opened = await openStore(store);
  try {
    const result = await replaySession(target, {
      store: opened,
      from,
      model,
      ...(tools ? { tools } : {}),
      ...(args.flags['recorded-tools'] === true ? { recordedTools: true } : {}),
      ...(args.strings.session !== undefined ? { sessionId: args.strings.session } : {}),
      ...(install ? { install } : {}),
    });
    const { events, ...rest } = result;
    const output: ReplayFromOutput = { format: 'steerlog-replay', version: 1, ...rest, events: events.length };
    io.stdout.write(
      json
        ? `${JSON.stringify(output)}\n`
        : `replayed ${target} from step ${result.point.turn}.${result.point.step} into ${result.sessionId} (a fork of ${target} at seq ${result.boundary}; ${events.length} events; recorded inputs: ${result.inputs.exact} as recorded, ${result.inputs.adapted} adapted, ${result.inputs.dropped} dropped)\ncompare: steerlog diff --store ${store} ${target} ${result.sessionId}\n`,
    );
    return 0;
  } catch (e) {
    if (isReplayPointError(e)) throw new UsageError(e.message);
    throw e;
  } finally {
    await opened.close().catch(() => undefined);
  }
};
