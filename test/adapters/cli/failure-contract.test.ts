import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../adapters/cli/main.js';
import { openJsonlEventStore, streamFileName } from '../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../runtime/ports/event-store.js';
import { runCli } from './support/run-cli.js';
import { fileModesApply, letAuditorReach, runAsAuditor, type CliRun } from './support/run-as-auditor.js';

/**
 * Issue 27's table: every command × every kind of failure answers by one contract — the documented exit code (0 valid,
 * 1 invalid, 2 usage / unknown store spec / no such session, 3 the store or file could not be read), one line on
 * stderr and no stack trace, and with `--json` exactly one JSON object on stdout, `{"ok":false,"error":{code,message}}`
 * for 2 and 3. A cell is null where the failure cannot happen to that command (export judges no log; sessions names
 * no session; demo and serve read no file).
 */
type Kind = 'missing file' | 'directory' | 'unreadable file' | 'unknown store spec' | 'unreachable store' | 'no such session' | 'bad flag' | 'invalid log' | 'damaged store';
const KINDS: readonly Kind[] = ['missing file', 'directory', 'unreadable file', 'unknown store spec', 'unreachable store', 'no such session', 'bad flag', 'invalid log', 'damaged store'];
const EXPECTED: Readonly<Record<Kind, number>> = {
  'missing file': 3,
  directory: 3,
  'unreadable file': 3,
  'unknown store spec': 2,
  'unreachable store': 3,
  'no such session': 2,
  'bad flag': 2,
  'invalid log': 1,
  'damaged store': 3,
};
/** The commands that take --json. */
const JSON_COMMANDS = new Set(['audit', 'verify', 'why', 'sessions', 'lineage', 'search', 'store', 'archive', 'erase', 'demo']);
const DOWN = 'postgres://postgres@127.0.0.1:1/test';
const SESSION = 'c-1';
const MODULE = 'docs/projections/accept-to-claim.ts';

let root: string;
/** Fixture paths, filled in beforeAll. */
const f = { store: '', log: '', invalidLog: '', invalidStore: '', damaged: '', missing: '', dir: '', unreadable: '', unreadableDir: '', messageId: '' };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'steerlog-contract-'));
  f.store = join(root, 'store');
  expect((await runCli('demo', '--store', `jsonl:${f.store}`, '--session', SESSION, '--json')).code).toBe(0);
  const lines = (await runCli('export', `jsonl:${f.store}`, SESSION)).stdout.trimEnd().split('\n');
  f.log = join(root, 'c-1.jsonl');
  writeFileSync(f.log, `${lines.join('\n')}\n`);
  f.messageId = (JSON.parse(lines.find((l) => l.includes('"agent/inbox/spliced"'))!) as { data: { inserted: { id: string }[] } }).data.inserted[0]!.id;
  // an invalid log: session/created names its session with a number (the fold stops at seq 0; the chain breaks there)
  const invalid = lines.map((l, i) => (i === 0 ? l.replace(`"sessionId":"${SESSION}"`, '"sessionId":42') : l));
  expect(invalid[0]).toContain('"sessionId":42');
  f.invalidLog = join(root, 'invalid.jsonl');
  writeFileSync(f.invalidLog, `${invalid.join('\n')}\n`);
  f.invalidStore = join(root, 'invalid-store');
  const store = await openJsonlEventStore(f.invalidStore, { durability: 'none' });
  const events = invalid.map((l) => JSON.parse(l) as { id: string; type: string; time: number; data: unknown; metadata?: Record<string, unknown> });
  await store.append(SESSION, events.map((e): NewEvent => ({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}) })), 'no_stream');
  await store.close();
  f.damaged = join(root, 'damaged');
  cpSync(f.store, f.damaged, { recursive: true });
  // a writable open first checkpoints the group journal, which would otherwise hold a copy to repair the line from
  expect((await runCli('store', 'repair', `jsonl:${f.damaged}`)).code).toBe(0);
  const file = join(f.damaged, 'streams', streamFileName(SESSION).fileName);
  const bytes = readFileSync(file);
  bytes[bytes.length - 30] = bytes[bytes.length - 30]! ^ 0x04;
  writeFileSync(file, bytes);
  f.missing = join(root, 'no-such-file.jsonl');
  f.dir = join(root, 'a-directory');
  mkdirSync(f.dir);
  f.unreadable = join(root, 'unreadable.jsonl');
  writeFileSync(f.unreadable, readFileSync(f.log));
  chmodSync(f.unreadable, 0o000);
  f.unreadableDir = join(root, 'unreadable-store');
  cpSync(f.store, f.unreadableDir, { recursive: true });
  chmodSync(f.unreadableDir, 0o000);
  chmodSync(root, 0o755);
  letAuditorReach(f.unreadable);
});
afterAll(() => {
  chmodSync(f.unreadableDir, 0o755);
  rmSync(root, { recursive: true, force: true });
});

/** The argv of each command for each kind of failure (null: the failure does not apply to the command). */
const cells = (): Readonly<Record<string, Readonly<Record<Kind, readonly string[] | null>>>> => ({
  audit: {
    'missing file': ['audit', f.missing],
    directory: ['audit', f.dir],
    'unreadable file': ['audit', f.unreadable],
    'unknown store spec': ['audit', '--store', 'bogus:x', SESSION],
    'unreachable store': ['audit', '--store', DOWN, SESSION],
    'no such session': ['audit', '--store', `jsonl:${f.store}`, 'nope'],
    'bad flag': ['audit', '--bogus', f.log],
    'invalid log': ['audit', f.invalidLog],
    'damaged store': ['audit', '--store', `jsonl:${f.damaged}`, SESSION],
  },
  verify: {
    'missing file': ['verify', f.missing],
    directory: ['verify', f.dir],
    'unreadable file': ['verify', f.unreadable],
    'unknown store spec': ['verify', '--store', 'bogus:x', SESSION],
    'unreachable store': ['verify', '--store', DOWN, SESSION],
    'no such session': ['verify', '--store', `jsonl:${f.store}`, 'nope'],
    'bad flag': ['verify', '--bogus', f.log],
    'invalid log': ['verify', f.invalidLog],
    'damaged store': ['verify', '--store', `jsonl:${f.damaged}`, SESSION],
  },
  why: {
    'missing file': ['why', f.missing, f.messageId],
    directory: ['why', f.dir, f.messageId],
    'unreadable file': ['why', f.unreadable, f.messageId],
    'unknown store spec': ['why', '--store', 'bogus:x', SESSION, f.messageId],
    'unreachable store': ['why', '--store', DOWN, SESSION, f.messageId],
    'no such session': ['why', '--store', `jsonl:${f.store}`, 'nope', f.messageId],
    'bad flag': ['why', '--bogus', f.log, f.messageId],
    'invalid log': ['why', f.invalidLog, f.messageId],
    'damaged store': ['why', '--store', `jsonl:${f.damaged}`, SESSION, f.messageId],
  },
  context: {
    'missing file': ['context', f.missing, '--step', '1.1'],
    directory: ['context', f.dir, '--step', '1.1'],
    'unreadable file': ['context', f.unreadable, '--step', '1.1'],
    'unknown store spec': ['context', '--store', 'bogus:x', SESSION, '--step', '1.1'],
    'unreachable store': ['context', '--store', DOWN, SESSION, '--step', '1.1'],
    'no such session': ['context', '--store', `jsonl:${f.store}`, 'nope', '--step', '1.1'],
    'bad flag': ['context', '--bogus', f.log, '--step', '1.1'],
    'invalid log': null,
    'damaged store': ['context', '--store', `jsonl:${f.damaged}`, SESSION, '--step', '1.1'],
  },
  replay: {
    'missing file': ['replay', f.missing, '--check'],
    directory: ['replay', f.dir, '--check'],
    'unreadable file': ['replay', f.unreadable, '--check'],
    'unknown store spec': ['replay', '--store', 'bogus:x', SESSION, '--check'],
    'unreachable store': ['replay', '--store', DOWN, SESSION, '--check'],
    'no such session': ['replay', '--store', `jsonl:${f.store}`, 'nope', '--check'],
    'bad flag': ['replay', '--bogus', f.log, '--check'],
    'invalid log': ['replay', f.invalidLog, '--check'],
    'damaged store': ['replay', '--store', `jsonl:${f.damaged}`, SESSION, '--check'],
  },
  trace: {
    'missing file': ['trace', f.missing],
    directory: ['trace', f.dir],
    'unreadable file': ['trace', f.unreadable],
    'unknown store spec': ['trace', '--store', 'bogus:x', SESSION],
    'unreachable store': ['trace', '--store', DOWN, SESSION],
    'no such session': ['trace', '--store', `jsonl:${f.store}`, 'nope'],
    'bad flag': ['trace', '--bogus', f.log],
    'invalid log': ['trace', f.invalidLog],
    'damaged store': ['trace', '--store', `jsonl:${f.damaged}`, SESSION],
  },
  diff: {
    'missing file': ['diff', f.missing, f.log],
    directory: ['diff', f.dir, f.log],
    'unreadable file': ['diff', f.unreadable, f.log],
    'unknown store spec': ['diff', '--store', 'bogus:x', SESSION, SESSION],
    'unreachable store': ['diff', '--store', DOWN, SESSION, SESSION],
    'no such session': ['diff', '--store', `jsonl:${f.store}`, 'nope', SESSION],
    'bad flag': ['diff', '--bogus', f.log, f.log],
    'invalid log': null,
    'damaged store': ['diff', '--store', `jsonl:${f.damaged}`, SESSION, SESSION],
  },
  sessions: {
    'missing file': ['sessions', '--store', `archive:${f.missing}`],
    directory: ['sessions', '--store', `archive:${f.dir}`],
    'unreadable file': ['sessions', '--store', `archive:${f.unreadable}`],
    'unknown store spec': ['sessions', '--store', 'bogus:x'],
    'unreachable store': ['sessions', '--store', DOWN],
    'no such session': null,
    'bad flag': ['sessions', '--bogus'],
    'invalid log': ['sessions', '--store', `jsonl:${f.invalidStore}`],
    'damaged store': ['sessions', '--store', `jsonl:${f.damaged}`],
  },
  lineage: {
    'missing file': ['lineage', SESSION, '--store', `archive:${f.missing}`],
    directory: ['lineage', SESSION, '--store', `archive:${f.dir}`],
    'unreadable file': ['lineage', SESSION, '--store', `archive:${f.unreadable}`],
    'unknown store spec': ['lineage', SESSION, '--store', 'bogus:x'],
    'unreachable store': ['lineage', SESSION, '--store', DOWN],
    'no such session': ['lineage', 'nope', '--store', `jsonl:${f.store}`],
    'bad flag': ['lineage', SESSION, '--bogus'],
    'invalid log': null,
    'damaged store': ['lineage', SESSION, '--store', `jsonl:${f.damaged}`],
  },
  search: {
    'missing file': ['search', 'hello', '--store', `archive:${f.missing}`],
    directory: ['search', 'hello', '--store', `archive:${f.dir}`],
    'unreadable file': ['search', 'hello', '--store', `archive:${f.unreadable}`],
    'unknown store spec': ['search', 'hello', '--store', 'bogus:x'],
    'unreachable store': ['search', 'hello', '--store', DOWN],
    'no such session': null,
    'bad flag': ['search', 'hello', '--bogus'],
    'invalid log': null,
    'damaged store': ['search', 'hello', '--store', `jsonl:${f.damaged}`],
  },
  export: {
    'missing file': ['export', `archive:${f.missing}`, SESSION],
    directory: ['export', `archive:${f.dir}`, SESSION],
    'unreadable file': ['export', `archive:${f.unreadable}`, SESSION],
    'unknown store spec': ['export', 'bogus:x', SESSION],
    'unreachable store': ['export', DOWN, SESSION],
    'no such session': ['export', `jsonl:${f.store}`, 'nope'],
    'bad flag': ['export', '--bogus', `jsonl:${f.store}`, SESSION],
    'invalid log': null,
    'damaged store': ['export', `jsonl:${f.damaged}`, SESSION],
  },
  project: {
    'missing file': ['project', f.missing, '--store', `jsonl:${f.store}`],
    directory: ['project', f.dir, '--store', `jsonl:${f.store}`],
    'unreadable file': ['project', f.unreadable, '--store', `jsonl:${f.store}`],
    'unknown store spec': ['project', MODULE, '--store', 'bogus:x'],
    'unreachable store': ['project', MODULE, '--store', DOWN],
    'no such session': ['project', MODULE, '--store', `jsonl:${f.store}`, '--stream', 'nope'],
    'bad flag': ['project', MODULE, '--bogus'],
    'invalid log': null,
    'damaged store': ['project', MODULE, '--store', `jsonl:${f.damaged}`],
  },
  projections: {
    'missing file': ['projections', 'replay-parked', f.missing, '--store', `jsonl:${f.store}`],
    directory: ['projections', 'replay-parked', f.dir, '--store', `jsonl:${f.store}`],
    'unreadable file': ['projections', 'replay-parked', f.unreadable, '--store', `jsonl:${f.store}`],
    'unknown store spec': ['projections', 'status', '--store', 'bogus:x'],
    'unreachable store': ['projections', 'status', '--store', DOWN],
    'no such session': null,
    'bad flag': ['projections', 'status', '--bogus'],
    'invalid log': null,
    'damaged store': ['projections', 'status', '--store', `jsonl:${f.damaged}`],
  },
  store: {
    'missing file': ['store', 'check', `jsonl:${f.missing}`],
    directory: null,
    'unreadable file': ['store', 'check', `jsonl:${f.unreadableDir}`],
    'unknown store spec': ['store', 'check', 'bogus:x'],
    'unreachable store': null,
    'no such session': null,
    'bad flag': ['store', 'check', `jsonl:${f.store}`, '--bogus'],
    // store check's verdict: a damaged store is its "invalid" (exit 1), not a failure to read
    'invalid log': ['store', 'check', `jsonl:${f.damaged}`],
    'damaged store': null,
  },
  archive: {
    'missing file': ['archive', '--store', `jsonl:${f.missing}`, '--before', '1'],
    directory: null,
    'unreadable file': null,
    'unknown store spec': ['archive', '--store', 'bogus:x', '--before', '1'],
    'unreachable store': ['archive', '--store', DOWN, '--before', '1'],
    'no such session': null,
    'bad flag': ['archive', '--bogus', '--before', '1'],
    'invalid log': null,
    'damaged store': ['archive', '--store', `jsonl:${f.damaged}`, '--before', '1'],
  },
  erase: {
    'missing file': null,
    directory: null,
    'unreadable file': null,
    'unknown store spec': ['erase', '--store', 'bogus:x', '--keys', `file:${join(root, 'keys.json')}`, '--session', SESSION],
    'unreachable store': ['erase', '--store', DOWN, '--session', SESSION],
    'no such session': ['erase', '--store', `jsonl:${f.store}`, '--session', 'nope'],
    'bad flag': ['erase', '--bogus', '--store', `jsonl:${f.store}`, '--session', SESSION],
    'invalid log': null,
    'damaged store': null,
  },
  demo: {
    'missing file': null,
    directory: null,
    'unreadable file': null,
    'unknown store spec': ['demo', '--store', 'bogus:x'],
    'unreachable store': ['demo', '--store', DOWN],
    'no such session': null,
    'bad flag': ['demo', '--bogus'],
    'invalid log': null,
    'damaged store': ['demo', '--store', `jsonl:${f.damaged}`],
  },
  serve: {
    'missing file': null,
    directory: null,
    'unreadable file': null,
    'unknown store spec': ['serve', '--store', 'bogus:x', '--port', '0'],
    'unreachable store': ['serve', '--store', DOWN, '--port', '0'],
    'no such session': null,
    'bad flag': ['serve', '--bogus'],
    'invalid log': null,
    'damaged store': ['serve', '--store', `jsonl:${f.damaged}`, '--port', '0'],
  },
});

/** The contract for one run: the code, one line on stderr (or the one JSON object), never a stack frame. */
const expectContract = (r: CliRun, code: number, json: boolean, where: string): void => {
  expect(r.code, `${where}: ${r.stderr}${r.stdout.slice(0, 300)}`).toBe(code);
  expect(r.stdout + r.stderr, where).not.toMatch(/\n\s+at .*[(:]\d+/);
  if (json) {
    expect(r.stderr, where).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines, where).toHaveLength(1);
    const out = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(typeof out, where).toBe('object');
    if (code >= 2) expect(out, where).toEqual({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
    if (code === 1 && 'ok' in out) expect(out.ok, where).toBe(false);
  } else if (code >= 2) {
    expect(r.stderr.trimEnd().split('\n'), where).toHaveLength(1);
    expect(r.stderr, where).toMatch(/^steerlog \w+( check)?: \S/);
  }
};

describe('one contract for exit codes and --json (issue 27)', () => {
  it('the table covers every command', () => {
    expect(Object.keys(cells()).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it.each(Object.keys(COMMANDS))('%s: every failure kind answers with the documented code, one line, one JSON object', async (command) => {
    const row = cells()[command]!;
    const runs: { kind: Kind; argv: readonly string[]; json: boolean }[] = [];
    for (const kind of KINDS) {
      const argv = row[kind];
      // root without setpriv reads a mode-000 file: that kind cannot be made here
      if (argv === null || (kind === 'unreadable file' && !fileModesApply)) continue;
      runs.push({ kind, argv, json: false });
      if (JSON_COMMANDS.has(command)) runs.push({ kind, argv: [...argv, '--json'], json: true });
    }
    // unreadable files need a user that file modes stop: as root, those runs go through `nobody`
    const unreadable = runs.filter((r) => r.kind === 'unreadable file');
    const asAuditor = await runAsAuditor(unreadable.map((r) => r.argv));
    for (const [i, run] of runs.entries()) {
      const r = run.kind === 'unreadable file' ? asAuditor[unreadable.indexOf(run)]! : await runCli(...run.argv);
      expectContract(r, EXPECTED[run.kind], run.json, `${run.argv.join(' ')} (${run.kind}, #${i})`);
    }
  });
});
