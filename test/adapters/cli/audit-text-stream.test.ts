import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { auditFile } from '../../../audit/audit-fold.js';
import { isStreamFile } from '../../../adapters/store/jsonl/stream-file-log.js';
import { auditExtras, auditOutput } from '../../../audit/audit-extras.js';
import { formatAuditContent } from '../../../audit/audit-content.js';
import { parseAuditLimit, type AuditLimit } from '../../../audit/audit-limit.js';
import { fileEnvelopes } from '../../../audit/log-sources.js';
import { main } from '../../../adapters/cli/main.js';
import { formatAuditReport } from '../../../adapters/cli/format-audit.js';
import { formatActions, formatAuditChain, formatOtherFates } from '../../../adapters/cli/format-audit-extras.js';
import { writeLog, writeSessionLog } from '../../../bench/support/session-log.js';
import { adversarialLog } from '../../../bench/support/adversarial-logs.js';

// `audit` (the human report) prints its turns, messages and actions from a temporary spool instead of holding the
// report; its bytes must stay exactly the report formatted whole, the way it was before.
const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));
const run = async (...argv: string[]) => {
  let stdout = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => undefined } });
  return { code, stdout };
};
const held = async (file: string, at: AuditLimit | null): Promise<string> => {
  const report = await auditFile(file, at ?? undefined);
  const extras = await auditExtras(null, fileEnvelopes(file), at ?? undefined);
  const out = auditOutput(report, extras, at);
  return formatAuditReport(report) + formatOtherFates(out) + formatActions(out) + formatAuditChain(report, extras.chain) + formatAuditContent(out.content);
};
const spools = (): string[] => readdirSync(dir).filter((n) => n.startsWith('steerlog-audit-spool-'));

const dir = mkdtempSync(join(tmpdir(), 'audit-text-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('steerlog audit prints the same bytes as the held report', () => {
  const logs = readdirSync(examples).filter((n) => n.endsWith('.jsonl'));
  it.each(logs)('%s, whole and at a few points', async (name) => {
    const file = join(examples, name);
    if (await isStreamFile(file)) return;
    for (const at of [null, parseAuditLimit('0'), parseAuditLimit('5'), parseAuditLimit('12')]) {
      const argv = at === null ? ['audit', file] : ['audit', file, '--at', String((at as { seq: number }).seq)];
      expect((await run(...argv)).stdout).toBe(await held(file, at));
    }
  });

  it('a log refused in its middle, and logs whose extras are read again (a blank line, a carriage return inside a line)', async () => {
    const lines = (await readFile(join(examples, 'inbox-edits.jsonl'), 'utf8')).trimEnd().split('\n');
    const variants = {
      'blank-inside': `${lines.slice(0, 3).join('\n')}\n\n${lines.slice(3).join('\n')}\n`,
      'cr-inside': `${lines.slice(0, 4).join('\n')}\n${lines[4]!.replace(',"type"', ',\r"type"')}\n${lines.slice(5).join('\n')}\n`,
      refused: `${lines.slice(0, 4).join('\n')}\n{"seq":4,"nonsense":true}\n${lines.slice(5).join('\n')}\n`,
    };
    for (const [name, text] of Object.entries(variants)) {
      const file = join(dir, `${name}.jsonl`);
      await writeFile(file, text);
      const { code, stdout } = await run('audit', file);
      expect(stdout).toBe(await held(file, null));
      expect(stdout).toContain('actions:');
      if (name === 'refused') expect(code).toBe(1);
    }
  });

  it("logs of many children and of one busy child: the children's lists printed from their spool", async () => {
    for (const shape of ['children', 'busy-child'] as const) {
      const file = join(dir, `${shape}.jsonl`);
      await writeLog(file, adversarialLog(shape, 6_000, 40));
      const { code, stdout } = await run('audit', file);
      expect(code).toBe(0);
      expect(stdout).toContain('    reports at seq ');
      expect(stdout).toBe(await held(file, null));
    }
  });

  it('generated logs of thousands of turns, messages and actions, a turn of thousands of claims (open and closed), and no spool left behind', async () => {
    // the spool goes to os.tmpdir(): point it at this test's own dir (TMPDIR), so other test files running audits
    // in parallel cannot make spools appear or vanish under the check
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    const before = spools();
    const realistic = join(dir, 'generated.jsonl');
    await writeSessionLog(realistic, 25_000, 300);
    const longTurn = join(dir, 'long-turn.jsonl');
    await writeLog(longTurn, adversarialLog('long-turn', 25_000, 300));
    const outs: [string, AuditLimit | null, string][] = [];
    for (const [file, at] of [[realistic, null], [longTurn, null], [longTurn, parseAuditLimit('20000')]] as const) {
      outs.push([file, at, (await run(...(at === null ? ['audit', file] : ['audit', file, '--at', '20000']))).stdout]);
    }
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    const spooled = spools().length;
    for (const [file, at, out] of outs) {
      expect(out.length).toBeGreaterThan(1 << 18);
      expect(out).toBe(await held(file, at));
    }
    expect(outs[0]![2]).toContain('inputs that did not enter the model:');
    expect(outs[2]![2]).toMatch(/ {2}turn 1 {2}seq \d+–… {2}open/);
    expect(before).toEqual([]);
    expect(spooled).toBe(0);
  });
});
