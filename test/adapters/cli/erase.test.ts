import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eraseScenario, tmp } from './support/erase-scenario.js';
import { runCli as run } from './support/run-cli.js';

eraseScenario('jsonl');

describe('steerlog erase: usage', () => {
  it('exits 2 on bad arguments and on a subject without keys', async () => {
    expect((await run('erase', '--store', 'memory:')).code).toBe(2);
    expect((await run('erase', '--session', 's')).code).toBe(2);
    expect((await run('erase', '--store', 'memory:', '--session', 's', '--actor', 'a')).code).toBe(2);
    expect((await run('erase', '--store', 'esdb://x:1', '--session', 's')).code).toBe(2);
    const dir = mkdtempSync(join(tmp, 'empty-'));
    const none = await run('erase', '--store', `jsonl:${dir}`, '--session', 's', '--json');
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, error: { code: 'no-data-keys' } });
    expect((await run('erase', '--help')).stdout).toContain('--actor <id>');
  });
});
