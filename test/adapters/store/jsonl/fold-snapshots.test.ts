import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { WorkSlices } from '../../../../adapters/store/shared/work-slices.js';
import { sharedSliceEncoder, sliceEncoder } from '../../../../adapters/store/jsonl/fold-snapshot-encoders.js';
import { appendSnapshotFile, decodeSnapshots, decodeSnapshotsNear, encodeSnapshots, encodeSnapshotsSliced, readSnapshotFile, readSnapshotFileNear, SNAPSHOTS_DIR } from '../../../../adapters/store/jsonl/fold-snapshot-files.js';
import type { MemoryEventStore } from '../../../../adapters/store/memory/memory-event-store.js';
import { snapshotsNear, type FoldSnapshot } from '../../../../runtime/ports/fold-snapshots.js';
import { foldRange } from '../../../../runtime/session-range.js';
import { foldSession } from '../../../../domain/session-fold.js';
import { sessionStateToJson } from '../../../../domain/session-state-snapshot.js';
import { initialResumeFacts, stepResumeFacts } from '../../../../domain/resume-facts.js';
import { runRandomSession } from '../../../support/random-session.js';

/** Fold snapshots beside the streams of a JSONL store: written by a writable store only, a damaged line skipped. */
const root = mkdtempSync(join(tmpdir(), 'steerlog-fold-snapshots-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const copySession = async (source: MemoryEventStore, dir: string): Promise<void> => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const events = [];
  for await (const e of source.read('rand')) events.push({ id: e.id, type: e.type, time: e.time, data: e.data, ...(e.metadata ? { metadata: e.metadata } : {}), ...(e.hash ? { hash: e.hash } : {}) });
  await store.append('rand', events, 'no_stream');
  await store.close();
};

describe('JSONL fold snapshots', () => {
  it('decode heads of any length a line allows: a UUID id, and ids and hashes that pass a short prefix', () => {
    const snapshots: FoldSnapshot[] = [
      { seq: 511, id: '3f0e1c2a-1b2c-4d3e-8f40-5a6b7c8d9e0f', hash: 'a'.repeat(64), version: 2, state: { n: 1 } },
      { seq: 1023, id: 'x'.repeat(400), hash: 'b'.repeat(64), version: 2, state: { n: 2 } },
      { seq: 1535, id: 'q"\\'.repeat(60), version: 2, state: [3] },
    ];
    const back = decodeSnapshots(encodeSnapshots(snapshots));
    expect(back.map((s) => ({ ...s }))).toEqual(snapshots);
  });

  it('are encoded in slices to the very bytes of the one-piece encoder, pausing between two snapshots once a slice ran', async () => {
    const snapshots: FoldSnapshot[] = Array.from({ length: 5 }, (_, i) => ({ seq: 512 * i + 511, id: `e-${i}`, ...(i % 2 === 0 ? { hash: 'c'.repeat(64) } : {}), version: 2, state: { i, text: 'é☃"\n'.repeat(i * 100) } }));
    for (const list of [[], snapshots.slice(0, 1), snapshots]) {
      let pauses = 0;
      const sliced = await encodeSnapshotsSliced(list, new WorkSlices(0, () => 0, (run) => (pauses++, setImmediate(run))));
      expect(sliced.equals(encodeSnapshots(list))).toBe(true);
      // 0 ms slices: a pause between every two snapshots
      expect(pauses).toBe(Math.max(0, list.length - 1));
      // never: no pause
      let never = 0;
      expect((await encodeSnapshotsSliced(list, new WorkSlices(Infinity, () => 0, (run) => (never++, setImmediate(run))))).equals(sliced)).toBe(true);
      expect(never).toBe(0);
    }
  });

  it('the store\'s encoder encodes one write\'s snapshots at a time, in slices; a plain one lets concurrent writes interleave', async () => {
    /** Snapshots whose states record when they are serialized (JSON.stringify calls toJSON). */
    const order: string[] = [];
    const snaps = (name: string): FoldSnapshot[] => [1, 2, 3].map((i) => ({ seq: i, id: `${name}${i}`, version: 2, state: { toJSON: () => (order.push(`${name}${i}`), { i }) } }));
    const shared = sharedSliceEncoder(0);
    const [a, b] = await Promise.all([shared(snaps('a')), shared(snaps('b'))]);
    expect(order).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
    expect(a.equals(encodeSnapshots(snaps('a')))).toBe(true);
    expect(b.equals(encodeSnapshots(snaps('b')))).toBe(true);
    order.length = 0;
    const plain = sliceEncoder(0);
    await Promise.all([plain(snaps('a')), plain(snaps('b'))]);
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
    // a failed encoding does not stop the next one
    order.length = 0;
    const failing: FoldSnapshot[] = [{ seq: 1, id: 'x', version: 2, state: { toJSON: () => { throw new Error('no'); } } }];
    const [failed, next] = await Promise.allSettled([shared(failing), shared(snaps('c'))]);
    expect(failed.status).toBe('rejected');
    expect(next.status === 'fulfilled' && next.value.equals(encodeSnapshots(snaps('c')))).toBe(true);
  });

  it('are kept in snapshots/, read back, never written by a read-only store, and a damaged line is skipped', async () => {
    const { agent, store: source } = await runRandomSession({ top: Array.from({ length: 6 }, () => ({ send: 'followup' as const })), replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false });
    const dir = join(root, 'a');
    await copySession(source, dir);
    const n = agent.events.length;

    const reader = await openJsonlEventStore(dir, { readOnly: true });
    await foldRange(reader, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    expect(existsSync(join(dir, SNAPSHOTS_DIR))).toBe(false); // reading never writes
    await reader.close();

    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    const kept = await store.loadFoldSnapshots('rand');
    expect(kept.map((s) => s.seq)).toEqual(Array.from({ length: Math.floor(n / 4) }, (_, i) => i * 4 + 3).filter((s) => s < n - 1));
    // the fold's state, and the resume facts of the same events
    const fullState = (seq: number) => {
      const events = agent.events.slice(0, seq + 1);
      return JSON.parse(JSON.stringify({ ...sessionStateToJson(foldSession(events).state), resume: events.reduce(stepResumeFacts, initialResumeFacts) })) as unknown;
    };
    for (const s of kept) expect(s.state).toEqual(fullState(s.seq));

    // a flipped byte in one line: that snapshot is skipped, the others are kept
    const [file] = readdirSync(join(dir, SNAPSHOTS_DIR));
    const path = join(dir, SNAPSHOTS_DIR, file!);
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"seq":7', '"seq":8');
    writeFileSync(path, lines.join('\n'));
    const left: readonly FoldSnapshot[] = await store.loadFoldSnapshots('rand');
    expect(left.map((s) => s.seq)).toEqual(kept.filter((s) => s.seq !== 7).map((s) => s.seq));
    // a range read still equals the full fold
    const range = await foldRange(store, 'rand', { from: 8, to: 10 }, null, { every: 4 });
    expect(range.events.map((e) => e.id)).toEqual(agent.events.slice(8, 10).map((e) => e.id));
    await store.close();
  });

  it('the snapshots near a range, bisected from a file or read from its tail, are the ones cut from the whole decode: damaged, torn and long lines among them (random)', async () => {
    const plain = (list: readonly FoldSnapshot[]): unknown => list.map((s) => ({ ...s }));
    const path = join(root, 'near.snap');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat({ max: 5000 }), { maxLength: 120 }),
        fc.array(fc.nat({ max: 4000 }), { minLength: 120, maxLength: 120 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('flip', 'newline', 'cut', 'join')), { maxLength: 6 }),
        fc.nat({ max: 5200 }),
        fc.nat({ max: 1200 }),
        fc.boolean(),
        async (seqs, sizes, damage, at, length, nearEnd) => {
          // a range near the file's end, half the time: the tail read answers it (or not, just below its first line)
          const from = nearEnd ? Math.max(0, Math.max(0, ...seqs) - (at % 400)) : at;
          const snapshots = [...seqs].sort((a, b) => a - b).map((seq, i): FoldSnapshot => ({ seq, id: `e-${seq}`, hash: seq.toString(16), version: 2, state: { pad: 'x'.repeat(sizes[i]!) } }));
          let bytes = encodeSnapshots(snapshots);
          for (const [where, kind] of damage) {
            if (bytes.length === 0) break;
            const at = where % bytes.length;
            if (kind === 'cut') bytes = bytes.subarray(0, at);
            else if (kind === 'join') {
              const nl = bytes.indexOf(0x0a, at);
              if (nl >= 0) bytes = Buffer.concat([bytes.subarray(0, nl), bytes.subarray(nl + 1)]);
            } else {
              bytes = Buffer.from(bytes);
              bytes[at] = kind === 'newline' ? 0x0a : bytes[at]! ^ 0x04;
            }
          }
          const range = { from, to: from + length };
          const expected = plain(snapshotsNear(decodeSnapshots(bytes), range));
          expect(plain(decodeSnapshotsNear(bytes, range))).toEqual(expected);
          // the file read (its tail first when the range lies in it: files up to ~500 KiB against a 16 KiB tail)
          writeFileSync(path, bytes);
          expect(plain(await readSnapshotFileNear(path, range))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a snapshot that lies about its head in the file is refused, the fold rebuilt from the log, and the file written again', async () => {
    const { agent, store: source } = await runRandomSession({ top: Array.from({ length: 8 }, () => ({ send: 'followup' as const })), replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false });
    const dir = join(root, 'liar');
    await copySession(source, dir);
    const n = agent.events.length;
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    const kept = await store.loadFoldSnapshots('rand');
    const [file] = readdirSync(join(dir, SNAPSHOTS_DIR));
    const path = join(dir, SNAPSHOTS_DIR, file!);
    // the last snapshot below the range names another event: its line checks (written whole), its claim does not
    const lie = kept.at(-1)!;
    writeFileSync(path, encodeSnapshots([...kept.slice(0, -1).map((s) => ({ ...s })), { ...lie, id: agent.events[lie.seq - 1]!.id, state: lie.state }]));
    const range = await foldRange(store, 'rand', { from: n - 1, to: n }, null, { every: 4 });
    expect(range.refused).toBe(true);
    expect(range.foldedFrom).toBe(0);
    expect(range.events.map((e) => e.id)).toEqual([agent.events[n - 1]!.id]);
    const rebuilt = await store.loadFoldSnapshots('rand');
    expect(rebuilt.map((s) => [s.seq, s.id])).toEqual(kept.map((s) => [s.seq, s.id]));
    await store.close();
  });

  it('appends past the last good line, reading only the tail: a torn last line stays one line that does not check, long lines grow the read', async () => {
    const dir = join(root, 'append');
    const path = join(dir, SNAPSHOTS_DIR, 'x.snap');
    const snap = (seq: number, pad = 10): FoldSnapshot => ({ seq, id: `e-${seq}`, hash: seq.toString(16).padStart(8, '0'), version: 2, state: { seq, pad: 'z'.repeat(pad) } });
    const plain = (list: readonly FoldSnapshot[]) => list.map((s) => ({ ...s }));
    // each append answers where the file's good lines end after it
    expect(await appendSnapshotFile(dir, path, [])).toBe(-1); // nothing to add to a missing file: none created
    expect(existsSync(path)).toBe(false);
    expect(await appendSnapshotFile(dir, path, [snap(1), snap(3)])).toBe(3);
    expect(readFileSync(path)).toEqual(encodeSnapshots([snap(1), snap(3)]));
    expect(await appendSnapshotFile(dir, path, [snap(2)])).toBe(3); // skipped: at or below the last line
    // a torn append (the line cut short, no newline): the next one starts on a line of its own
    const whole = encodeSnapshots([snap(1), snap(3), snap(5)]);
    writeFileSync(path, whole.subarray(0, whole.length - 9));
    expect(await appendSnapshotFile(dir, path, [snap(4), snap(7)])).toBe(7);
    expect(plain(await readSnapshotFile(path))).toEqual(plain([snap(1), snap(3), snap(4), snap(7)]));
    // lines longer than the first tail read (64 KiB): the read grows until it holds a whole good line
    await appendSnapshotFile(dir, path, [snap(9, 150_000), snap(8)]);
    await appendSnapshotFile(dir, path, [snap(9, 1), snap(11, 200_000)]);
    await appendSnapshotFile(dir, path, [snap(10), snap(12, 3)]);
    const all = await readSnapshotFile(path);
    expect(all.map((s) => s.seq)).toEqual([1, 3, 4, 7, 9, 11, 12]);
    expect((all[4]!.state as { pad: string }).pad.length).toBe(150_000);
    for (const range of [{ from: 0, to: 20 }, { from: 10, to: 12 }, { from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER }]) {
      expect(plain(decodeSnapshotsNear(readFileSync(path), range))).toEqual(plain(snapshotsNear(all, range)));
    }
  });
});
