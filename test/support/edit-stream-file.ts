import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeLine, encodeEventLine, type StoredEvent } from '../../adapters/store/jsonl/line-codec.js';
import { rebuildJsonlIndex } from '../../adapters/store/jsonl/rebuild-index.js';

/**
 * Edits a JSONL store's stream file in place the way a forger with the codec would: on the first event line of
 * `stream` (of `type`, when given) that contains `from`, replaces it with `to` (same length: the index holds line offsets) and recomputes
 * the line's checksum, removes the group journal (a writable open would otherwise write the journaled line back over
 * the edit) and rebuilds the global index from the stream files (`steerlog store repair --rebuild-index`), so the
 * store reads the line without complaint. The store must be closed. Returns the edited event's seq.
 */
export const editStreamFile = async (dir: string, stream: string, from: string, to: string, type?: string): Promise<number> => {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('editStreamFile: the replacement must keep the byte length');
  for (const name of readdirSync(join(dir, 'streams'))) {
    const file = join(dir, 'streams', name);
    const lines = readFileSync(file, 'utf8').split('\n');
    if (!lines[0]?.includes(`"stream":${JSON.stringify(stream)}`)) continue;
    const i = lines.findIndex((l) => l.includes('"e":') && l.includes(from) && (type === undefined || l.includes(`"type":${JSON.stringify(type)}`)));
    if (i < 0) throw new Error(`editStreamFile: no event of ${stream} holds ${from}`);
    const decoded = decodeLine(Buffer.from(lines[i]!, 'utf8'));
    if (typeof decoded === 'string' || decoded.kind !== 'event') throw new Error('editStreamFile: not an event line');
    const forged = JSON.parse(JSON.stringify(decoded.event).replace(from, to)) as StoredEvent;
    lines[i] = encodeEventLine(forged).bytes.toString('utf8').replace(/\n$/, '');
    writeFileSync(file, lines.join('\n'));
    rmSync(join(dir, 'group.journal'), { force: true });
    await rebuildJsonlIndex(dir);
    return decoded.event.rev;
  }
  throw new Error(`editStreamFile: no stream file for ${stream} in ${dir}`);
};
