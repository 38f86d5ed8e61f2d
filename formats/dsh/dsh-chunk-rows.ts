import { DshLogError } from './dsh-errors.js';
import { isJsonObject } from '../../domain/json.js';

/**
 * Packed chunk rows: the harness's JSONL backend stores a run of at least three consecutive streamed deltas of one
 * block (same turn, step and block index; for tool calls the same call id and name) as one line instead of one
 * `assistant/chunk` per delta:
 *
 * - `{type: "text-chunks", seq0, time0, data: {turn, step, index, dt, texts}}` — `text-delta` chunks;
 * - `{type: "reasoning-chunks", seq0, time0, data: {turn, step, index, dt, texts}}` — `reasoning-delta` chunks;
 * - `{type: "tool-call-chunks", seq0, time0, data: {turn, step, index, id, name?, dt, args}}` — `tool-call-delta`
 *   chunks (`name` on every member or on none).
 *
 * Member k stands for `assistant/chunk {turn, step, chunk}` at seq `seq0 + k`, time `time0 + dt[0] + … + dt[k−1]`.
 * The row tags have no slash, so they cannot be mistaken for event types. A row is decoded into exactly the events it
 * stands for, so `audit` and `why` read a packed log as they read the same log unpacked.
 */
export const DSH_CHUNK_ROW_TAGS = ['text-chunks', 'reasoning-chunks', 'tool-call-chunks'] as const;

/** One of {@link DSH_CHUNK_ROW_TAGS}. */
export type DshChunkRowTag = (typeof DSH_CHUNK_ROW_TAGS)[number];

type Obj = Record<string, unknown>;
const exactKeys = (o: Obj, keys: readonly string[]): boolean => Object.keys(o).length === keys.length && keys.every((k) => Object.hasOwn(o, k));
const isSafeInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** Is this parsed line a packed chunk row (by its tag)? */
export const isDshChunkRow = (raw: unknown): raw is Obj & { type: DshChunkRowTag } =>
  isJsonObject(raw) && (DSH_CHUNK_ROW_TAGS as readonly unknown[]).includes(raw.type);

/**
 * The harness events a packed row stands for (as the harness writes an unpacked `assistant/chunk`: `{type, seq,
 * time, data: {turn, step, chunk}}`), in order. A row that breaks the shape above is refused
 * (`dsh-malformed-envelope`, naming the line and the row's first seq): it cannot be read without losing its run.
 */
export const decodeDshChunkRow = (row: Obj & { type: DshChunkRowTag }, line: number): Obj[] => {
  const tag = row.type;
  const refuse = (reason: string): never => {
    throw new DshLogError('dsh-malformed-envelope', { line, seq: isSafeInt(row.seq0) && row.seq0 >= 0 ? row.seq0 : null, byteOffset: null }, `${tag} row: ${reason}`);
  };
  if (!exactKeys(row, ['type', 'seq0', 'time0', 'data'])) refuse('a packed row is exactly {type, seq0, time0, data}');
  if (!isSafeInt(row.seq0) || row.seq0 < 0) refuse('seq0 must be a non-negative integer');
  if (!isSafeInt(row.time0)) refuse('time0 must be an integer (epoch ms)');
  const data = row.data;
  if (!isJsonObject(data)) return refuse('data must be an object');
  const call = tag === 'tool-call-chunks';
  const keys = call ? ['turn', 'step', 'index', 'id', 'dt', 'args'] : ['turn', 'step', 'index', 'dt', 'texts'];
  const named = call && Object.hasOwn(data, 'name');
  if (!exactKeys(data, named ? [...keys, 'name'] : keys)) refuse(`data must be exactly {${call ? 'turn, step, index, id, name?, dt, args' : 'turn, step, index, dt, texts'}}`);
  if (typeof data.turn !== 'number' || typeof data.step !== 'number' || typeof data.index !== 'number') refuse('turn, step and index must be numbers');
  if (call && (typeof data.id !== 'string' || (named && typeof data.name !== 'string'))) refuse('id (and name, when present) must be strings');
  const members = data[call ? 'args' : 'texts'];
  if (!Array.isArray(members) || members.length === 0 || !members.every((m) => typeof m === 'string')) refuse(`${call ? 'args' : 'texts'} must be a non-empty array of strings`);
  const dt = data.dt;
  if (!Array.isArray(dt) || !dt.every(isSafeInt)) refuse('dt must be an array of integers');
  if ((dt as number[]).length !== (members as string[]).length - 1) refuse(`dt has ${(dt as number[]).length} gaps for ${(members as string[]).length} members (one fewer expected)`);
  const seq0 = row.seq0 as number;
  let time = row.time0 as number;
  return (members as string[]).map((member, k) => {
    if (k > 0) time += (dt as number[])[k - 1]!;
    if (!Number.isSafeInteger(time) || !Number.isSafeInteger(seq0 + k)) refuse('a member seq or time is past the safe integers');
    const chunk = call
      ? { type: 'tool-call-delta', index: data.index, id: data.id, ...(named ? { name: data.name } : {}), argumentsDelta: member }
      : { type: tag === 'text-chunks' ? 'text-delta' : 'reasoning-delta', index: data.index, text: member };
    return { type: 'assistant/chunk', seq: seq0 + k, time, data: { turn: data.turn, step: data.step, chunk } };
  });
};
