import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { isArchiveError } from '../../../formats/archive/archive-format.js';
import { openArchiveEventStore } from '../../../adapters/archive/archive-event-store.js';
import { archiveSessions } from '../../../audit/archive-sessions.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { runCli } from '../cli/support/run-cli.js';
import { CUTOFF, populate } from './support/archive-fixture.js';
import { tempDir } from './archive.shared.js';

let dir: string;
let good: Buffer;
let text: string;
beforeAll(async () => {
  dir = tempDir();
  const store = new MemoryEventStore();
  await populate(store);
  await archiveSessions(store, { out: join(dir, 'good.jsonl.gz'), before: CUTOFF, clock: () => 1 });
  good = readFileSync(join(dir, 'good.jsonl.gz'));
  text = gunzipSync(good).toString('utf8');
});

let n = 0;
const write = (bytes: Buffer): string => {
  const f = join(dir, `damaged-${n++}.jsonl.gz`);
  writeFileSync(f, bytes);
  return f;
};
const refusal = async (file: string): Promise<unknown> => openArchiveEventStore(file).then(async (s) => {
  await s.close();
  return null;
}, (e: unknown) => e);

describe('a damaged archive is refused, naming where', () => {
  it('a flipped byte anywhere after the gzip header: refused as archive-corrupt, unless the content is unchanged (padding bits)', async () => {
    const step = Number(process.env.STEERLOG_ARCHIVE_FLIP_STEP ?? 37);
    let refused = 0;
    for (let at = 10; at < good.length; at += step) {
      const bytes = Buffer.from(good);
      bytes[at] = bytes[at]! ^ 0x10;
      const file = write(bytes);
      const e = await refusal(file);
      if (e === null) {
        expect(gunzipSync(bytes).toString('utf8'), `byte ${at}`).toBe(text); // read fine: then it holds exactly the original
        continue;
      }
      expect(isArchiveError(e) && e.code === 'archive-corrupt', `byte ${at}: ${String(e)}`).toBe(true);
      expect((e as Error).message).toContain(file);
      refused++;
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('a truncated archive: refused as archive-corrupt, saying how many lines were read intact', async () => {
    for (const keep of [good.length - 1, good.length - 8, Math.floor(good.length / 2), 12]) {
      const e = await refusal(write(good.subarray(0, keep)));
      expect(isArchiveError(e) && e.code === 'archive-corrupt', `${keep} bytes: ${String(e)}`).toBe(true);
      expect((e as Error).message).toMatch(/truncated|ends early/);
    }
    // cut at a line boundary and recompressed: valid gzip, no manifest
    const lines = text.split('\n');
    const e = await refusal(write(gzipSync(lines.slice(0, 30).join('\n') + '\n')));
    expect((e as Error).message).toMatch(/line 30.*no manifest after line 30: the archive is truncated/);
  });

  it('an event changed and recompressed: the section digest names the session and line; recomputed digests still leave the chain broken', async () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes('"find it"') && lines.slice(0, lines.indexOf(l)).some((p) => p.includes('"session":"old-parent"')));
    expect(at).toBeGreaterThan(0);
    const changed = [...lines];
    changed[at] = changed[at]!.replace('"find it"', '"find IT"');
    const e = await refusal(write(gzipSync(changed.join('\n'))));
    expect(isArchiveError(e) && e.code === 'archive-corrupt').toBe(true);
    expect((e as Error).message).toMatch(/\(line \d+, session old-parent\): SHA-256 of the section is [0-9a-f]{64}, the end line says/);

    // a forger who also recomputes every digest: the archive opens, and verify finds the broken link
    const { createHash } = await import('node:crypto');
    const rebuilt: string[] = [];
    let section: string[] = [];
    const sums = new Map<string, string>();
    for (const l of changed) {
      const v = l === '' ? null : (JSON.parse(l) as Record<string, unknown>);
      if (v?.archive === 'session') section = [];
      else if (v?.archive === 'end') {
        const sha = createHash('sha256').update(section.map((s) => `${s}\n`).join('')).digest('hex');
        sums.set(v.session as string, sha);
        rebuilt.push(JSON.stringify({ ...v, sha256: sha }));
        continue;
      } else if (v?.archive === 'manifest') {
        rebuilt.push(JSON.stringify({ ...v, sessions: (v.sessions as { session: string }[]).map((s) => ({ ...s, sha256: sums.get(s.session) })) }));
        continue;
      } else if (v !== null && !('format' in v)) section.push(l);
      rebuilt.push(l);
    }
    const forged = write(gzipSync(rebuilt.join('\n')));
    expect(await refusal(forged)).toBeNull();
    const verify = await runCli('verify', forged, '--all', '--json');
    expect(verify.code).toBe(1);
    const v = JSON.parse(verify.stdout) as { sessions: { stream: string; status: string; break: { kind: string; seq: number } | null }[] };
    expect(v.sessions.map((s) => [s.stream, s.status])).toEqual([['old-a', 'verified'], ['old-parent', 'broken'], ['old-child', 'verified']]);
    expect(v.sessions[1]!.break?.kind).toBe('hash-mismatch');
  });

  it('the manifest must list each section as its end line does: any other count, head, digest, name or order is refused; key order is not a difference', async () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"archive":"manifest"'));
    expect(at).toBeGreaterThan(0);
    type Entry = { session: string; events: number; head: { seq: number; hash: string }; sha256: string };
    const manifest = JSON.parse(lines[at]!) as { archive: 'manifest'; sessions: Entry[]; events: number };
    expect(manifest.sessions.length).toBeGreaterThan(1);
    /** The archive with its manifest line's text replaced; its manifest counts the same events either way. */
    const withManifest = (line: string): string => write(gzipSync([...lines.slice(0, at), line, ...lines.slice(at + 1)].join('\n')));
    const withSessions = (sessions: readonly unknown[]): string => withManifest(JSON.stringify({ ...manifest, sessions }));
    const [first, second, ...rest] = manifest.sessions as [Entry, Entry, ...Entry[]];
    const otherHex = (h: string): string => (h[0] === '0' ? '1' : '0') + h.slice(1);

    expect(await refusal(withSessions(manifest.sessions))).toBeNull();
    // the same entries with their keys in another order: the same sections
    const reordered = manifest.sessions.map((e) => ({ sha256: e.sha256, head: { hash: e.head.hash, seq: e.head.seq }, events: e.events, session: e.session }));
    expect(await refusal(withSessions(reordered))).toBeNull();

    for (const [what, sessions] of [
      ['another event count', [{ ...first, events: first.events + 1 }, { ...second, events: second.events - 1 }, ...rest]],
      ['another head seq', [{ ...first, head: { ...first.head, seq: first.head.seq + 1 } }, second, ...rest]],
      ['another head hash', [{ ...first, head: { ...first.head, hash: otherHex(first.head.hash) } }, second, ...rest]],
      ['another digest', [first, { ...second, sha256: otherHex(second.sha256) }, ...rest]],
      ['another session name', [{ ...first, session: `${first.session}-x` }, second, ...rest]],
      ['the sections in another order', [second, first, ...rest]],
      ['a section left out', [first, ...rest]],
    ] as const) {
      const e = await refusal(withSessions(sessions));
      expect(isArchiveError(e) && e.code === 'archive-corrupt', `${what}: ${String(e)}`).toBe(true);
      // refused at the manifest line, naming no session: the manifest's own check, not a section's
      expect([(e as { line: unknown }).line, (e as { session: unknown }).session], what).toEqual([at + 1, null]);
    }
  });

  it('the CLI: exit 3 with the place for a damaged archive, exit 3 for a missing one, not-gzip refused', async () => {
    const truncated = write(good.subarray(0, good.length - 8));
    for (const argv of [
      ['verify', truncated, '--all'],
      ['audit', '--store', `archive:${truncated}`, 'old-a'],
      ['why', '--store', `archive:${truncated}`, 'old-a', 'm1'],
      ['sessions', '--store', `archive:${truncated}`],
    ]) {
      const r = await runCli(...argv);
      expect(r.code, argv.join(' ')).toBe(3);
      expect(r.stderr, argv.join(' ')).toContain(`${truncated} (line `);
    }
    const json = await runCli('audit', '--store', `archive:${truncated}`, 'old-a', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'archive-corrupt' } });
    const missing = await runCli('audit', '--store', `archive:${join(dir, 'nope.gz')}`, 'old-a', '--json');
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, error: { code: 'store-io' } });
    const plain = write(Buffer.from('{"seq":0}\n'));
    expect(await refusal(plain)).toMatchObject({ code: 'archive-corrupt' });
  });
});
