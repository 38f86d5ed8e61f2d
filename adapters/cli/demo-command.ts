import { ScriptedModel } from '../model/scripted/scripted-model.js';
import { DEFAULT_STORE_SPEC, openStore } from '../store/open-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage } from './cli-failure.js';
import { signerFromOption } from '../chain/signer-option.js';
import type { HeadSigner } from '../../runtime/ports/head-signer.js';
import { auditLines } from '../../domain/audit.js';
import { auditExtras, auditOutput } from '../../audit/audit-extras.js';
import { isKnownEvent } from '../../domain/events.js';
import { createUserMessage, type MessageSource } from '../../domain/message.js';
import type { MessageId } from '../../domain/brand.js';
import { createRuntime } from '../../runtime/runtime.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { silentLogger } from '../../runtime/logger.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { CliIo } from './io.js';
import { formatAuditReport } from './format-audit.js';

const m = (id: string, text: string, source: MessageSource = { kind: 'user' }) => createUserMessage(text, source, { newId: () => id as MessageId });

export const DEMO_USAGE = `usage: steerlog demo [--store <spec>] [--session <id>] [--key <ed25519.pem>] [--json]
  --key <pem>       sign the chain head at every checkpoint with this Ed25519 private key (default: $STEERLOG_SIGNING_KEY, else none)
  --store <spec>    where the session is kept: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | memory:   (default ${DEFAULT_STORE_SPEC})
  --session <id>    the session id (default demo-<random>)
  --json            print only the audit report, as JSON
exit: 0 the session's log is valid, 1 invalid, 2 usage, 3 the store could not be opened or written`;

/**
 * `steerlog demo`: a scripted session that shows queueing (two follow-ups in one tick), steering inside a tool body,
 * context staged by a tool result and by a plugin, then prints the audit of its own log. Deterministic ids and clock.
 */
export const demoCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'session', 'key'], flags: ['json'] });
  if (!args.ok) return reportUsage(io, DEMO_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  if (args.positionals.length > 0) return reportUsage(io, DEMO_USAGE, `unexpected argument ${args.positionals[0]}`, json);
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const sessionId = args.strings.session ?? `demo-${globalThis.crypto.randomUUID().slice(0, 8)}`;
  let signer: HeadSigner | undefined;
  try {
    signer = signerFromOption(args.strings.key);
  } catch (e) {
    return reportUsage(io, DEMO_USAGE, (e as Error).message, json);
  }
  let store: EventStore;
  try {
    store = await openStore(spec);
  } catch (e) {
    return reportFailure(io, 'demo', e, json);
  }
  try {
    return await runDemo(store, spec, sessionId, json, io, signer);
  } catch (e) {
    return reportFailure(io, 'demo', e, json);
  } finally {
    await store.close().catch(() => undefined);
  }
};

/** The demo's user: every prompt and the steer are theirs (kind `user`); the clock plugin injects, the tool stages. */
const DEMO_USER = { id: 'demo', kind: 'user' } as const;

const runDemo = async (store: EventStore, spec: string, sessionId: string, json: boolean, io: CliIo, signer?: HeadSigner): Promise<number> => {
  const say = (line: string) => {
    if (!json) io.stdout.write(`${line}\n`);
  };
  const model = new ScriptedModel([
    { text: 'Reading the build log.', toolCalls: [{ callId: 'call-1', name: 'read_log', arguments: { path: 'build.log' } }] },
    (req) => `Noted ${req.messages.filter((x) => x.role === 'user').length} inputs: three tests fail (a, b, c).`,
    'Ticket OPS-42 opened for the three failures.',
    'Release notes drafted, with the clock context applied.',
  ]);
  const runtime = createRuntime({
    store,
    model,
    clock: steppingClock(1_764_460_800_000, 7),
    ids: sequentialIds(),
    logger: silentLogger,
    ...(signer ? { signer } : {}),
    tools: [
      {
        name: 'read_log',
        description: 'reads a log file',
        execute: (_args, { agent }) => {
          say('  · tool read_log runs; meanwhile the user steers: "Only the failing tests, please"');
          agent.steer(m('steer-1', 'Only the failing tests, please'), { actor: DEMO_USER });
          return { content: 'FAIL a\nFAIL b\nFAIL c', additionalContexts: [m('ctx-log', 'log excerpt: 3 failures', { kind: 'plugin', plugin: 'log-reader', form: 'snapshot' })] };
        },
      },
    ],
  });
  const agent = runtime.createSession({ sessionId, systemPrompt: 'You are a release assistant.', actor: DEMO_USER });
  agent.on('inbox/inserted', (x) => say(`  + inserted ${x.id}`));
  agent.on('inbox/claimed', (x, turn) => say(`  → claimed ${x.id} for turn ${turn}`));
  agent.on('status', (s) => say(`  status: ${s}`));
  agent.onEvent((e) => {
    if (!isKnownEvent(e)) return; // an ignorable event of an unknown type: nothing to narrate
    if (e.type === 'turn/start') say(`turn ${e.data.turn} starts`);
    if (e.type === 'turn/end') say(`turn ${e.data.turn} ends: ${e.data.reason.kind}`);
    if (e.type === 'assistant/message') {
      const text = e.data.message.content.find((b) => b.type === 'text')?.text;
      if (text) say(`  model: ${text}`);
    }
  });

  say('Two follow-ups in one tick: the first opens turn 1, the second waits for turn 2.');
  agent.followup(m('prompt-1', 'Summarize the build log'), { actor: DEMO_USER });
  agent.followup(m('prompt-2', 'Then open a ticket'), { actor: DEMO_USER });
  await agent.whenIdle();
  say('A plugin injects context without waking the agent; the next prompt claims it first.');
  agent.inject(m('ctx-clock', 'It is Monday, release day.', { kind: 'plugin', plugin: 'clock' }), { actor: { id: 'clock', kind: 'plugin' } });
  agent.followup(m('prompt-3', 'Draft the release notes'), { actor: DEMO_USER });
  await agent.whenIdle();
  await agent.dispose(); // drains the log to the store

  const report = auditLines(agent.sessionId, agent.events.map((e) => JSON.stringify(e)));
  // the same object `steerlog audit --json` prints for this session (chain, fates, times included)
  const out = auditOutput(report, await auditExtras(agent.sessionId, (async function* () { yield* agent.events; })()), null);
  if (json) io.stdout.write(`${JSON.stringify(out)}\n`);
  else {
    say('');
    say(`Audit of the session's own log (${agent.events.length} events):`);
    io.stdout.write(formatAuditReport(report));
    say('');
    say(`The session is stored in ${spec.startsWith('jsonl:') ? `the JSONL store in ${spec.slice(6)}` : spec} as stream ${sessionId}.`);
    say(`Audit it again from the store: steerlog audit --store ${spec} ${sessionId}`);
    say(`Verify its hash chain: steerlog verify --store ${spec} ${sessionId}`);
  }
  return report.ok ? EXIT.ok : EXIT.invalid;
};
