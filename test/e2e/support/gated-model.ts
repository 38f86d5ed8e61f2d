import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asMessageId } from '../../../domain/brand.js';
import type { Agent } from '../../../runtime/agent.js';
import type { ModelSetupContext } from '../../../adapters/cli/serve-model.js';
import type { ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';

/**
 * A model for tests that drive a real `steerlog serve` process (loaded with `--model module:<this file>`). A step
 * whose input contains `[hold:<tag>]` writes `<STEERLOG_GATE_DIR>/started-<tag>` and blocks until the test creates
 * `<STEERLOG_GATE_DIR>/release-<tag>` (or the turn is canceled), once per tag; other steps answer at once. The answer is
 * `reply: <the step's inputs joined by " + ">`. A step holding `[stream:<tag>]` first streams `streamed words for <tag>` (as
 * assistant chunks), then holds on the gate `<tag>`. A step holding `[slowstop:<tag>]` that is canceled does not end at
 * once: it writes `started-<tag>` and ends only after `release-<tag>` (a stop that is still converging).
 *
 * Its `setup(agent)` (serve calls it for every live session) plays a plugin, driven by markers in message text:
 * - a step claiming `[reject:<tag>]` is held in pre-step on the same gate, then rejected (the turn ends blocked);
 * - an inserted message carrying `[inject:<id>]` makes the plugin inject `<id>` (a non-waking next-step message),
 *   `[inject:<id>:<kind>]` with source kind `<kind>` (`subagent-report`, `coordinator`); `[followup:<id>:<kind>]`
 *   sends it for the next turn instead;
 * - an inserted message carrying `[cancel]` makes the plugin cancel the agent the default way (pending input cleared);
 * - an inserted message carrying `[late:<id>]` makes the plugin steer `<id>` (a waking user send) in a microtask
 *   right after the next `turn/end` is logged, the moment the driver checks for pending work before going idle;
 * - a session whose id starts with `inject-` gets the plugin's `X` injected as soon as it is created (idle inject);
 * - an inserted message carrying `[child:<id>]` starts a continuable child `<id>` (label `<id>`) whose first prompt
 *   is `[hold:<id>] work of <id>` (so its first step holds on the gate); `[oneshot:<id>]` runs a one-shot child `<id>`.
 */
const dir = process.env['STEERLOG_GATE_DIR'] ?? '.';

const inputs = (request: ModelRequest): string[] => {
  const lastAssistant = request.messages.map((m) => m.role).lastIndexOf('assistant');
  return request.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'user')
    .map((m) => (m.role === 'user' ? m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') : ''));
};

const waitFor = (file: string, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (existsSync(file)) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
    signal.addEventListener('abort', () => (clearInterval(timer), reject(new Error('aborted'))), { once: true });
  });

const hold = async (tag: string, given: readonly string[], signal: AbortSignal): Promise<void> => {
  // a tag holds once: a later step that carries the same message again (after an abort or a crash) runs on
  if (existsSync(join(dir, `started-${tag}`))) return;
  writeFileSync(join(dir, `started-${tag}`), JSON.stringify(given));
  await waitFor(join(dir, `release-${tag}`), signal);
};
const textOf = (m: { content: readonly { type: string; text?: string }[] }): string => m.content.map((b) => b.text ?? '').join('');
const pluginMessage = (id: string, kind = 'plugin') => ({
  role: 'user' as const,
  id: asMessageId(id),
  content: [{ type: 'text' as const, text: id }],
  source: kind === 'plugin' ? { kind: 'plugin' as const, plugin: 'e2e' } : { kind },
});

export const setup = (agent: Agent, context?: ModelSetupContext): void => {
  agent.on('pre-step', async (ctx, next) => {
    const texts = ctx.messages.map(textOf);
    for (const tag of texts.flatMap((t) => [...t.matchAll(/\[reject:([\w-]+)\]/g)].map((m) => m[1]!))) {
      await hold(tag, texts, ctx.signal);
      return { kind: 'reject' };
    }
    return next();
  });
  const late: string[] = [];
  agent.onEvent((e) => {
    if (e.type !== 'turn/end') return;
    for (const id of late.splice(0)) queueMicrotask(() => agent.steer({ ...pluginMessage(id), source: { kind: 'user' } }));
  });
  agent.on('inbox/inserted', (message) => {
    const text = textOf(message);
    for (const m of text.matchAll(/\[inject:(\w+)(?::([\w-]+))?\]/g)) queueMicrotask(() => agent.inject(pluginMessage(m[1]!, m[2])));
    for (const m of text.matchAll(/\[followup:(\w+):([\w-]+)\]/g)) queueMicrotask(() => agent.followup(pluginMessage(m[1]!, m[2])));
    for (const m of text.matchAll(/\[late:(\w+)\]/g)) late.push(m[1]!);
    if (text.includes('[cancel]')) queueMicrotask(() => agent.cancel({ kind: 'hook', reason: 'e2e-plugin' }));
    const children = context?.children;
    if (children) {
      for (const m of text.matchAll(/\[child:([\w-]+)\]/g)) {
        const id = m[1]!;
        queueMicrotask(() => void children.startContinuable(agent, { content: `[hold:${id}] work of ${id}`, childSessionId: id, label: id }).catch(() => {}));
      }
      for (const m of text.matchAll(/\[oneshot:([\w-]+)\]/g)) {
        const id = m[1]!;
        queueMicrotask(() => void children.start(agent, { content: `once ${id}`, childSessionId: id, label: id }).catch(() => {}));
      }
    }
  });
  if (agent.sessionId.startsWith('inject-') && agent.events.length === 1) agent.inject(pluginMessage('X'));
};

const model: ModelPort = {
  provider: 'gate',
  model: 'gate-1',
  async complete(request) {
    const given = inputs(request);
    const slow = given.flatMap((t) => [...t.matchAll(/\[slowstop:([\w-]+)\]/g)].map((m) => m[1]!));
    try {
      for (const tag of given.flatMap((t) => [...t.matchAll(/\[stream:([\w-]+)\]/g)].map((m) => m[1]!))) {
        for (const word of ['streamed ', 'words ', 'for ', tag]) request.onChunk?.({ type: 'text', text: word });
        await hold(tag, given, request.signal);
      }
      for (const tag of given.flatMap((t) => [...t.matchAll(/\[hold:([\w-]+)\]/g)].map((m) => m[1]!))) await hold(tag, given, request.signal);
    } catch (e) {
      for (const tag of slow) await hold(tag, given, new AbortController().signal);
      throw e;
    }
    return { content: [{ type: 'text', text: `reply: ${given.join(' + ')}` }], finishReason: 'stop' } satisfies ModelResponse;
  },
};
export default model;
