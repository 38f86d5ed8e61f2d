import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLinesLogger, type LogFields, type LogLevel } from '../../runtime/logger.js';

/** The line as a record built whole and serialized makes it (what `jsonLinesLogger` wrote for every record before it wrote the common ones member by member). */
const recordLine = (time: number, level: LogLevel, message: string, fields: LogFields | undefined, error: unknown): string => {
  const record: Record<string, unknown> = { time: new Date(time).toISOString(), level, msg: message };
  if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined && !(k in record)) record[k] = v;
  if (error !== undefined) {
    const e = error as { name?: unknown; message?: unknown; code?: unknown };
    record.error = error instanceof Error ? { name: e.name, message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) } : { message: String(error) };
  }
  try {
    return `${JSON.stringify(record)}\n`;
  } catch {
    return `${JSON.stringify({ time: record.time, level, msg: message, fields: 'not JSON' })}\n`;
  }
};

const key = fc.oneof(fc.constantFrom('requestId', 'sessionId', 'traceId', 'time', 'level', 'msg', 'error', 'toString', '__proto__', 'constructor', '0', '12', '1a', 'a b', 'é', '"'), fc.string());
const value = fc.oneof(
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.constant(new Date(0)),
);
const fields = fc.option(fc.array(fc.tuple(key, value), { maxLength: 6 }).map((entries) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out as LogFields;
}), { nil: undefined });
const error = fc.option(fc.oneof(fc.string().map((m) => new Error(m)), fc.string().map((c) => Object.assign(new TypeError('t'), { code: c })), fc.string()), { nil: undefined });

describe('jsonLinesLogger', () => {
  it('writes, member by member, the very line the whole record serializes to', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.constantFrom<LogLevel>('info', 'warn', 'error'), fc.string(), fields, error, (time, level, message, f, e) => {
        const lines: string[] = [];
        jsonLinesLogger({ write: (l) => lines.push(l), now: () => time, level: 'debug' }).log(level, message, f, e);
        expect(lines).toEqual([recordLine(time, level, message, f, e)]);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the time of every record as toISOString does, however the records follow one another', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: -5000, max: 0 })), { minLength: 1, maxLength: 20 }), (times) => {
        const lines: string[] = [];
        let i = 0;
        const logger = jsonLinesLogger({ write: (l) => lines.push(l), now: () => times[i]! });
        for (; i < times.length; i++) logger.log('info', 'm');
        expect(lines.map((l) => JSON.parse(l).time)).toEqual(times.map((t) => new Date(t).toISOString()));
      }),
      { numRuns: 500 },
    );
  });

  it('records in the same millisecond share the time; the next millisecond gets its own', () => {
    let t = 5;
    const lines: string[] = [];
    const logger = jsonLinesLogger({ write: (l) => lines.push(l), now: () => t });
    logger.log('info', 'a');
    logger.log('info', 'b');
    t = 6;
    logger.log('info', 'c');
    expect(lines.map((l) => JSON.parse(l).time)).toEqual(['1970-01-01T00:00:00.005Z', '1970-01-01T00:00:00.005Z', '1970-01-01T00:00:00.006Z']);
  });
});
