import { describe, expect, it } from 'vitest';
import { batchedLines } from '../../../adapters/cli/batched-lines.js';

describe('batchedLines', () => {
  it('writes the lines of one turn of the event loop in one write, in order, and flush writes the rest at once', async () => {
    const writes: string[] = [];
    const log = batchedLines((chunk) => writes.push(chunk));
    log.line('a');
    log.line('b');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n']);
    log.line('c');
    log.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });
});

describe('batchedLines with a time window', () => {
  it('writes the lines of a window in one write, in order, once the window ends; more than the cap is written at once', async () => {
    const writes: string[] = [];
    const log = batchedLines((chunk) => writes.push(chunk), { maxDelayMs: 30, maxQueued: 8 });
    log.line('a');
    await new Promise((r) => setImmediate(r));
    log.line('b');
    // a turn of the loop later nothing is written yet: the window is still open
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(writes).toEqual(['a\nb\n']);
    // 'ccc\n' + 'dddd\n' reaches the cap of 8: written at once, without waiting for the window
    log.line('ccc');
    log.line('dddd');
    expect(writes).toEqual(['a\nb\n', 'ccc\ndddd\n']);
    await new Promise((r) => setTimeout(r, 60));
    expect(writes).toHaveLength(2);
  });

  it('loses nothing at shutdown: flush writes every queued line at once, and the window then writes nothing twice', async () => {
    const writes: string[] = [];
    const log = batchedLines((chunk) => writes.push(chunk), { maxDelayMs: 10_000 });
    const lines = Array.from({ length: 1000 }, (_, i) => `{"n":${i}}`);
    for (const l of lines) log.line(l);
    expect(writes).toEqual([]);
    log.flush();
    expect(writes.join('')).toBe(`${lines.join('\n')}\n`);
    log.flush();
    expect(writes).toHaveLength(1);
  });

  it('does not keep the process alive for its window: a process that ends writes what waits on exit', async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const module = fileURLToPath(new URL('../../../adapters/cli/batched-lines.ts', import.meta.url));
    // the window is an hour: the process ends at once (the timer does not hold it) and its exit hook writes the lines
    const script = `const { batchedLines } = await import(${JSON.stringify(module)});
const log = batchedLines((chunk) => process.stderr.write(chunk), { maxDelayMs: 3_600_000 });
process.on('exit', log.flush);
for (let i = 0; i < 3; i++) log.line('line ' + i);`;
    const started = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('line 0\nline 1\nline 2\n');
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
