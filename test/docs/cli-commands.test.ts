import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, main } from '../../adapters/cli/main.js';
import { serveCommand } from '../../adapters/cli/serve-command.js';

/**
 * The CLI the docs show is the CLI that runs (issue 27). Every `steerlog …` in README.md and docs/*.md — in a ```sh
 * block or inline — names a command that exists, and every `--option` it shows is one that command takes. Every
 * command line of a ```sh block is run, in the order the docs give, against a fixture that stands in for their
 * placeholders (a JSONL store holding case-1182 and case-2210 for `postgres://…@db/steerlog`, a key pair for
 * steerlog.pub.pem, the head the previous `--head` printed for `<seq>:<hash>`): its exit code is the one the line's
 * comment claims (`(exit N)`, else 0), and its first line of output matches what the comment claims after `→`
 * (`…` and `<placeholder>` stand for anything).
 */
const ROOT = new URL('../..', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');
const DOCS = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

interface ShownCommand {
  readonly doc: string;
  /** The words after `steerlog`. */
  readonly words: readonly string[];
  /** A ```sh line (run) or inline (checked only). */
  readonly runnable: boolean;
  readonly env: Readonly<Record<string, string>>;
  readonly comment: string;
  readonly line: string;
}

const shown: ShownCommand[] = DOCS.flatMap((doc) => {
  const text = read(doc);
  const out: ShownCommand[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      // `npm ci && npx steerlog serve`: the steerlog part
      const m = /^((?:[A-Z_]+=\S+\s+)*)(?:npx\s+)?steerlog\s+([^#]*?)\s*(?:#\s*(.*))?$/.exec(line.trim().replace(/^.*&&\s*/, ''));
      if (!m) continue;
      const env = Object.fromEntries([...m[1]!.matchAll(/([A-Z_]+)=(\S+)/g)].map((e) => [e[1]!, e[2]!]));
      out.push({ doc, words: m[2]!.split(/\s+/).filter(Boolean), runnable: true, env, comment: m[3] ?? '', line: line.trim() });
    }
  }
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/`(?:npx )?steerlog ([^`]+)`/g)) {
    const words = m[1]!.split(/\s+/).filter(Boolean);
    // an output line quoted in prose ("steerlog serve: listening on …"), not a command
    if (/:$/.test(words[0]!)) continue;
    out.push({ doc, words, runnable: false, env: {}, comment: '', line: m[0] });
  }
  return out;
});

describe('every steerlog command the docs show exists, with the options they show', () => {
  it('finds the commands', () => {
    expect(shown.filter((c) => c.runnable).length).toBeGreaterThanOrEqual(20);
    expect(shown.filter((c) => !c.runnable).length).toBeGreaterThanOrEqual(40);
  });

  it.each(DOCS)('%s', async (doc) => {
    const problems: string[] = [];
    for (const c of shown.filter((s) => s.doc === doc)) {
      const [name] = c.words;
      if (name === '--version' || name === '--help' || name === 'help' || name!.startsWith('<')) continue;
      if (!Object.hasOwn(COMMANDS, name!)) {
        problems.push(`${c.line}: no command ${name}`);
        continue;
      }
      const { usage } = await COMMANDS[name!]!.load();
      if (name === 'store' && !['check', 'repair', 'migrate'].includes(c.words[1]!)) problems.push(`${c.line}: store ${c.words[1]}?`);
      for (const w of c.words.slice(1)) {
        const option = /^(--[a-z][\w-]*)/.exec(w)?.[1];
        if (option && option !== '--help' && !usage.includes(option)) problems.push(`${c.line}: ${name} takes no ${option}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/** Lines whose run needs what no fixture here gives; each names where its behaviour is tested instead. */
const NOT_RUN: Readonly<Record<string, string>> = {
  'steerlog erase --store postgres://dpo@db/steerlog --actor user:ana@example.org --by dpo:eve --json':
    'needs content encrypted under that actor\'s key: test/adapters/cli/erase.test.ts runs erase end to end',
};

let dir: string;
const cwd = process.cwd();

/** The fixture's stand-ins for the docs' placeholders. */
const STORES: Readonly<Record<string, string>> = {
  'postgres://audit@db/steerlog': 'jsonl:./audited',
  'postgres://dpo@db/steerlog': 'jsonl:./audited',
  'postgres://ops@db/steerlog': 'jsonl:./operated',
  'postgres://127.0.0.1/app': 'jsonl:./app',
  // `store migrate`'s target must be empty: a directory no other line writes
  'postgres://…/steerlog': 'jsonl:./migrated',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steerlog-doc-cli-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(dir, 'steerlog.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'steerlog.pub.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const dsh = new URL('docs/examples/dsh/', ROOT).pathname;
  const zst = readdirSync(dsh).find((f) => f.endsWith('.jsonl.zst'))!;
  const plain = readdirSync(dsh).find((f) => f.endsWith('.jsonl'))!;
  writeFileSync(join(dir, 'session.jsonl.zst'), readFileSync(join(dsh, zst)));
  writeFileSync(join(dir, 'session.jsonl'), readFileSync(join(dsh, plain)));
  mkdirSync(join(dir, 'out'));
  process.chdir(dir);
  for (const [store, session] of [
    ['jsonl:./audited', 'case-1182'],
    ['jsonl:./audited', 'case-2210'],
    ['jsonl:./operated', 'case-1182'],
  ] as const) {
    expect((await run(['demo', '--store', store, '--session', session, '--key', 'steerlog.pem', '--json'])).code).toBe(0);
  }
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

const run = async (argv: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ code: number; stdout: string; stderr: string }> => {
  let stdout = '';
  let stderr = '';
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    if (argv[0] === 'serve') {
      // the Host runs until stopped: stop it once it has printed its first line
      const stop = new AbortController();
      const io = { stdout: { write: (s: string) => ((stdout += s), setImmediate(() => stop.abort())) }, stderr: { write: (s: string) => (stderr += s) } };
      const args = argv.includes('--port') ? argv.slice(1) : [...argv.slice(1), '--port', '0'];
      const code = await serveCommand(args, io, stop.signal);
      return { code, stdout: stdout.replace(/(127\.0\.0\.1|0\.0\.0\.0):\d+/, '127.0.0.1:7420'), stderr };
    }
    const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
};

/** A claim as a pattern: `…` and `<placeholder>` stand for anything, the rest is literal. */
const claimPattern = (claim: string): RegExp =>
  new RegExp(`^${claim.split(/(…|<[^>]+>)/).map((part, i) => (i % 2 === 1 ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`);

describe('every command line of the docs’ sh blocks runs as they say', () => {
  const lines = shown.filter((c) => c.runnable);
  let head = '';
  let messageId = '';

  it.each(lines.map((c) => [`${c.doc}: ${c.line}`, c] as const))('%s', async (_, c) => {
    if (NOT_RUN[c.line.replace(/\s*#.*$/, '').replace(/^npx /, '')]) return;
    if (messageId === '') {
      const exported = (await run(['export', 'jsonl:./audited', 'case-1182'])).stdout.split('\n');
      messageId = (JSON.parse(exported.find((l) => l.includes('"agent/inbox/spliced"'))!) as { data: { inserted: { id: string }[] } }).data.inserted[0]!.id;
    }
    const words: string[] = [];
    let redirect: string | undefined;
    for (let i = 0; i < c.words.length; i++) {
      const w = c.words[i]!;
      if (w === '>') {
        redirect = c.words[++i];
        continue;
      }
      // a file of the repository (a projection module) is read where it is, not through a copy
      const repoFile = w.startsWith('./docs/') ? new URL(w.slice(2), ROOT).pathname : undefined;
      words.push(STORES[w] ?? repoFile ?? (w === '<message-id>' ? messageId : w === '<seq>:<hash>' ? head : w));
    }
    // a harness log's own input: the first message its audit lists
    if (c.words.includes('<message-id>') && words[1]!.startsWith('session.jsonl')) {
      const audited = JSON.parse((await run(['audit', words[1]!, '--json'])).stdout) as { messages: { id: string }[] };
      words[words.indexOf(messageId)] = audited.messages[0]!.id;
    }
    const r = await run(words, c.env);
    const exit = Number(/\(exit (\d)\)/.exec(c.comment)?.[1] ?? 0);
    expect(r.code, `${c.line}\n${r.stderr}${r.stdout.slice(0, 400)}`).toBe(exit);
    if (redirect) writeFileSync(join(dir, 'out', redirect), r.stdout);
    const claim = /→\s*(.+)$/.exec(c.comment)?.[1]?.trim();
    if (claim) expect(r.stdout.split('\n')[0], c.line).toMatch(claimPattern(claim));
    if (words.includes('--head')) head = r.stdout.split('\n')[0]!.split(' ')[1]!;
  });
});
