import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';

/**
 * A model for tests that drive a real `steerlog serve` process (loaded with `--model module:<this file>`). A step
 * whose input contains `[hold:<tag>]` writes `<STEERLOG_GATE_DIR>/started-<tag>` and blocks until the test creates
 * `<STEERLOG_GATE_DIR>/release-<tag>` (or the turn is canceled), once per tag; other steps answer at once. The answer is
 * `reply: <the step's inputs joined by " + ">`.
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

const model: ModelPort = {
  provider: 'gate',
  model: 'gate-1',
  async complete(request) {
    const given = inputs(request);
    for (const tag of given.flatMap((t) => [...t.matchAll(/\[hold:([\w-]+)\]/g)].map((m) => m[1]!))) {
      // a tag holds once: a later step that carries the same message again (after an abort or a crash) runs on
      if (existsSync(join(dir, `started-${tag}`))) continue;
      writeFileSync(join(dir, `started-${tag}`), JSON.stringify(given));
      await waitFor(join(dir, `release-${tag}`), request.signal);
    }
    return { content: [{ type: 'text', text: `reply: ${given.join(' + ')}` }], finishReason: 'stop' } satisfies ModelResponse;
  },
};
export default model;
