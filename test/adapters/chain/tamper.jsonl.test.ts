import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { storeEnvelopes } from '../../../audit/log-sources.js';
import { openJsonlEventStore, type JsonlEventStore } from '../../../adapters/store/jsonl/index.js';
import { encodeEventLine, decodeLine, type StoredEvent } from '../../../adapters/store/jsonl/line-codec.js';
import { asNewEvents, chainedSession } from '../../support/chained-session.js';
import { describeTamperSuite } from './tamper.shared.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-tamper-'));
  dirs.push(d);
  return d;
};
let store: JsonlEventStore;
beforeAll(async () => {
  store = await openJsonlEventStore(tmp(), { durability: 'none' });
});
afterAll(async () => {
  await store.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describeTamperSuite('jsonl', { store: () => store, positions: (n) => [0, 1, 5, Math.floor(n / 2), n - 1] });

describe('tamper evidence — a JSONL store file edited in place, checksums recomputed', () => {
  it('a user message rewritten with a valid line CRC is found at its seq; the store itself cannot tell', async () => {
    const dir = tmp();
    const sid = 'edited-session';
    const first = await openJsonlEventStore(dir, { durability: 'none' });
    await first.append(sid, asNewEvents(await chainedSession(sid)), 'no_stream');
    await first.close();
    const file = join(dir, 'streams', readdirSync(join(dir, 'streams'))[0]!);
    const lines = readFileSync(file, 'utf8').split('\n');
    // the line of the first user/message: rewrite its text, keep its length (the global index holds line offsets
    // and lengths), and recompute the line's checksum, as someone editing the file with the codec would
    const i = lines.findIndex((l) => l.includes('"type":"user/message"'));
    const decoded = decodeLine(Buffer.from(lines[i]!, 'utf8'));
    if (typeof decoded === 'string' || decoded.kind !== 'event') throw new Error('not an event line');
    const forged: StoredEvent = JSON.parse(JSON.stringify(decoded.event).replace('find it', 'wipe it')) as StoredEvent;
    lines[i] = encodeEventLine(forged).bytes.toString('utf8').replace(/\n$/, '');
    expect(lines[i]!.length).toBe(Buffer.byteLength(lines[i]!)); // ASCII: same byte length
    writeFileSync(file, lines.join('\n'));

    const reopened = await openJsonlEventStore(dir, { durability: 'none' });
    try {
      const v = await verifySession(sid, storeEnvelopes(reopened, sid));
      expect(v.ok).toBe(false);
      expect(v.break).toMatchObject({ kind: 'hash-mismatch', seq: decoded.event.rev });
    } finally {
      await reopened.close();
    }
  });
});
