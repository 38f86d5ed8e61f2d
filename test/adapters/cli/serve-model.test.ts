import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isModelSpecError, openModel } from '../../../adapters/cli/serve-model.js';

describe('openModel: a module: model and its optional setup(agent)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-model-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return `module:${path}`;
  };
  const model = `export default { provider: 't', model: 't', complete: async () => ({ content: [], finishReason: 'stop' }) };`;

  it('returns the module setup export next to its model, and none when the module has none', async () => {
    const withSetup = await openModel(write('with.mjs', `${model}\nexport const setup = (agent) => { agent.touched = true; };`), {});
    const agent: Record<string, unknown> = {};
    withSetup.setup!(agent as never, { children: {} as never });
    expect(agent).toEqual({ touched: true });
    expect((await openModel(write('without.mjs', model), {})).setup).toBeUndefined();
  });

  it('refuses a setup export that is not a function, with a typed error', async () => {
    const refused = await openModel(write('bad.mjs', `${model}\nexport const setup = 42;`), {}).catch((e: unknown) => e);
    expect(isModelSpecError(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/setup is not a function/);
  });
});
