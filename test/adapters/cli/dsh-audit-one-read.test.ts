import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli as run } from './support/run-cli.js';

// `steerlog audit` of a harness log opens the harness reader once per run (it used to open it twice: the fold's pass,
// then the extras' pass). The reader module is replaced by one that counts its openings and passes (isolated file).
const counts = vi.hoisted(() => ({ opened: 0, passes: 0 }));
vi.mock('../../../formats/dsh/dsh-source.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../formats/dsh/dsh-source.js')>();
  return {
    ...original,
    openDshLog: (file: string) => {
      counts.opened++;
      const log = original.openDshLog(file);
      return {
        summary: log.summary,
        envelopes: {
          [Symbol.asyncIterator]: () => {
            counts.passes++;
            return log.envelopes[Symbol.asyncIterator]();
          },
        },
      };
    },
  };
});

const dir = fileURLToPath(new URL('../../../docs/examples/dsh', import.meta.url));
beforeEach(() => {
  counts.opened = 0;
  counts.passes = 0;
});

describe('audit of a harness log reads the file once', () => {
  it.each([
    ['aborted-child.jsonl.zst', 'aborted-child'],
    ['harness/queued-steered.jsonl', 'harness/queued-steered.jsonl'],
  ])('%s: one opening and one pass per run, the committed reports exactly', async (file, name) => {
    for (const [args, report] of [
      [['--json'], `${name}.report.json`],
      [[], `${name}.report.txt`],
      [['--format', 'dsh', '--json'], `${name}.report.json`],
    ] as const) {
      counts.opened = 0;
      counts.passes = 0;
      expect(await run('audit', join(dir, file), ...args)).toEqual({ code: 0, stdout: readFileSync(join(dir, report), 'utf8'), stderr: '' });
      expect(counts, `${file} ${args.join(' ')}`).toEqual({ opened: 1, passes: 1 });
    }
  });

  it('at a seq too', async () => {
    const r = await run('audit', join(dir, 'harness/queued-steered.jsonl'), '--at', '10', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ at: { seq: 10 }, source: { format: 'dsh', harnessEvents: 10 } });
    expect(counts).toEqual({ opened: 1, passes: 1 });
  });
});
