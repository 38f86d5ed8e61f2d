import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { auditFile } from '../../../audit/audit-fold.js';
import { isStreamFile } from '../../../adapters/store/jsonl/stream-file-log.js';
import { auditExtras, auditOutput } from '../../../audit/audit-extras.js';
import { parseAuditLimit, type AuditLimit } from '../../../audit/audit-limit.js';
import { fileEnvelopes } from '../../../audit/log-sources.js';
import { main } from '../../../adapters/cli/main.js';
import { writeSessionLog } from '../../../bench/support/session-log.js';
import * as E from 'fp-ts/lib/Either.js';
import { fateOf } from '../../../domain/input-fate.js';
import { initialMessageFactState, stepMessageFacts, type MessageFact } from '../../../domain/message-facts.js';
import { parseEvent } from '../../../domain/parse-event.js';

// `audit --json` writes its turns and messages element by element from a temporary spool instead of holding the
// report; its bytes must stay exactly JSON.stringify of the whole report object, built the way it was before.
const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));
const run = async (...argv: string[]) => {
  let stdout = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => undefined } });
  return { code, stdout };
};
const held = async (file: string, at: AuditLimit | null): Promise<string> => {
  const report = await auditFile(file, at ?? undefined);
  const extras = await auditExtras(null, fileEnvelopes(file), at ?? undefined);
  return `${JSON.stringify(auditOutput(report, extras, at))}\n`;
};
const spools = (): string[] => readdirSync(dir).filter((n) => n.startsWith('steerlog-audit-spool-'));

const dir = mkdtempSync(join(tmpdir(), 'audit-json-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// the audit steps each input's fate as its facts come instead of keeping the facts: same fates as folding them all
const fatesFromAllFacts = async (file: string) => {
  let state = initialMessageFactState();
  const facts = new Map<string, MessageFact[]>();
  for await (const raw of fileEnvelopes(file)) {
    const parsed = parseEvent(raw, { expectedSeq: state.session.nextSeq });
    if (E.isLeft(parsed)) break;
    const step = stepMessageFacts(state, parsed.right);
    if (E.isLeft(step)) break;
    state = step.right.state;
    for (const f of step.right.facts) facts.set(f.id, [...(facts.get(f.id) ?? []), f]);
  }
  return [...facts.entries()].map(([id, fs]) => fateOf(id, fs));
};

describe('audit fates stepped fact by fact', () => {
  it.each(readdirSync(examples).filter((n) => n.endsWith('.jsonl')))('%s: equal the fold of all its facts', async (name) => {
    const file = join(examples, name);
    if (await isStreamFile(file)) return;
    expect((await auditExtras(null, fileEnvelopes(file))).fates).toEqual(await fatesFromAllFacts(file));
  });
});

describe('steerlog audit --json streams the same bytes as the held report', () => {
  const logs = readdirSync(examples).filter((n) => n.endsWith('.jsonl'));
  it.each(logs)('%s, whole and at a few points', async (name) => {
    const file = join(examples, name);
    if (await isStreamFile(file)) return;
    for (const at of [null, parseAuditLimit('0'), parseAuditLimit('5'), parseAuditLimit('12')]) {
      const argv = at === null ? ['audit', file, '--json'] : ['audit', file, '--at', String((at as { seq: number }).seq), '--json'];
      expect((await run(...argv)).stdout).toBe(await held(file, at));
    }
  });
  it('a log whose extras are read again (a blank line, a carriage return inside a line): the second pass\'s actions, once', async () => {
    const lines = (await readFile(join(examples, 'inbox-edits.jsonl'), 'utf8')).trimEnd().split('\n');
    const variants = {
      'blank-inside': `${lines.slice(0, 3).join('\n')}\n\n${lines.slice(3).join('\n')}\n`,
      'cr-inside': `${lines.slice(0, 4).join('\n')}\n${lines[4]!.replace(',"type"', ',\r"type"')}\n${lines.slice(5).join('\n')}\n`,
    };
    for (const [name, text] of Object.entries(variants)) {
      const file = join(dir, `${name}.jsonl`);
      await writeFile(file, text);
      const out = (await run('audit', file, '--json')).stdout;
      expect(out).toBe(await held(file, null));
      expect((JSON.parse(out) as { actions: unknown[] }).actions.length).toBeGreaterThan(3);
    }
  });
  it('a generated log of thousands of turns and messages (several spool flushes), and no spool left behind', async () => {
    // the spool goes to os.tmpdir(): point it at this test's own dir (TMPDIR), so other test files running audits
    // in parallel cannot make spools appear or vanish under the check
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    const before = spools();
    const file = join(dir, 'generated.jsonl');
    await writeSessionLog(file, 60_000, 300);
    const out = (await run('audit', file, '--json')).stdout;
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    const spooled = spools().length;
    const expected = await held(file, null);
    expect(JSON.parse(out).turns.length).toBeGreaterThan(1000);
    expect(out.length).toBeGreaterThan(1 << 21);
    expect(out).toBe(expected);
    expect(before).toEqual([]);
    expect(spooled).toBe(0);
  });
});
