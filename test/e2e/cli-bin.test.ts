import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/** The installed command as a newcomer runs it: the built package (dist/) through bin/steerlog.js, in a child process. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const steerlog = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin/steerlog.js'), ...args], { cwd: ROOT, encoding: 'utf8' });

describe('bin/steerlog.js (the built package)', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
  }, 120_000);

  it('demo keeps a session in a JSONL store, audit --store reads it, project runs a TypeScript projection module on it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-bin-'));
    const demo = steerlog('demo', '--store', `jsonl:${dir}`, '--session', 'bin-demo');
    expect(demo.status).toBe(0);
    expect(demo.stdout).toContain('session bin-demo: 40 events, valid');
    const audit = steerlog('audit', '--store', `jsonl:${dir}`, 'bin-demo', '--json');
    expect(audit.status).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ stream: 'bin-demo', ok: true, events: 40 });
    const project = steerlog('project', 'docs/projections/accept-to-claim.ts', '--store', `jsonl:${dir}`);
    expect(project.stderr).toBe('');
    expect(project.status).toBe(0);
    expect(JSON.parse(project.stdout).user.count).toBeGreaterThan(0);
  });

  it('audits a shipped example and exits 1 on an invalid log, 2 on a usage error', () => {
    expect(steerlog('audit', 'docs/examples/queue-steer-context.jsonl').status).toBe(0);
    expect(steerlog('audit', 'docs/examples/invalid-schema.jsonl').status).toBe(1);
    expect(steerlog('audit').status).toBe(2);
  });

  it('exits quietly when its reader closes the pipe (steerlog demo | head -1)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-bin-'));
    const r = spawnSync('sh', ['-c', `"${process.execPath}" bin/steerlog.js demo --store jsonl:${dir} | head -1`], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stdout.split('\n')[0]).toMatch(/^Two follow-ups/);
    expect(r.stderr).toBe('');
  });

  it('a store that cannot be read exits 3 with one line, never a stack trace; --version works', () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'steerlog-bin-')), 'none');
    const r = steerlog('audit', '--store', `jsonl:${missing}`, 's');
    expect(r.status).toBe(3);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const pgDown = steerlog('audit', '--store', 'postgres://postgres@127.0.0.1:1/test', 's', '--json');
    expect(pgDown.status).toBe(3);
    expect(JSON.parse(pgDown.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
    expect(steerlog('--version').stdout).toMatch(/^steerlog \d+\.\d+\.\d+\n$/);
  });

  it('on damaged stores: exit 1 or 3, one line or one JSON object, no stack trace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-bin-'));
    expect(steerlog('demo', '--store', `jsonl:${dir}`, '--session', 'dmg', '--json').status).toBe(0);
    // a byte flipped in the middle of the session's stream file: the session's read meets it
    const streams = join(dir, 'streams');
    const file = join(streams, readdirSync(streams).find((f) => f.startsWith('dmg'))!);
    const lines = readFileSync(file);
    lines[Math.floor(lines.length / 2)] = lines[Math.floor(lines.length / 2)]! ^ 0x20;
    writeFileSync(file, lines);
    const audit = steerlog('audit', '--store', `jsonl:${dir}`, 'dmg');
    expect(audit.status).toBe(3);
    expect(audit.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(audit.stderr).not.toMatch(/\n\s+at /);
    // and one in the global index: `store check` reads everything
    const index = join(dir, 'global.idx');
    const bytes = readFileSync(index);
    bytes[100] = bytes[100]! ^ 0x20;
    writeFileSync(index, bytes);
    const check = steerlog('store', 'check', `jsonl:${dir}`, '--json');
    expect(check.status).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: false });
  });
});
