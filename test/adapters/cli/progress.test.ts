import { describe, expect, it } from 'vitest';
import { createProgress } from '../../../adapters/cli/progress.js';

const io = (isTTY: boolean) => {
  const written: string[] = [];
  return { written, io: { stdout: { write: () => true }, stderr: { isTTY, write: (s: string) => written.push(s) } } };
};

describe('progress on stderr', () => {
  it('draws a count on a TTY, throttled, and clears the line at the end', () => {
    const t = io(true);
    let clock = 0;
    const p = createProgress(t.io, 'verifying', false, { everyMs: 100, now: () => clock });
    for (let i = 0; i < 4096; i++) {
      clock += 1;
      p.tick();
    }
    p.done();
    expect(t.written.length).toBeGreaterThan(1);
    expect(t.written[0]).toBe('\rverifying: 1,024 events');
    expect(t.written.at(-1)).toBe('\r\u001b[2K');
  });

  it('writes nothing when stderr is not a TTY, or the output is JSON', () => {
    for (const [tty, json] of [[false, false], [true, true]] as const) {
      const t = io(tty);
      let clock = 0;
      const p = createProgress(t.io, 'verifying', json, { everyMs: 1, now: () => (clock += 10) });
      for (let i = 0; i < 5000; i++) p.tick();
      p.done();
      expect(t.written).toEqual([]);
    }
  });
});
