/** The levels of a {@link Logger}, least severe first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** The levels in order of severity. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * The structured fields of a log record: where it happened (the request, the session, the trace and span its
 * telemetry names) and any other key (lossless JSON).
 */
export interface LogFields {
  readonly requestId?: string;
  readonly sessionId?: string;
  readonly traceId?: string;
  readonly spanId?: string;
  readonly [key: string]: unknown;
}

/**
 * Where the runtime reports what it contains (a throwing listener, a failed background write). `warn` is the one
 * method every logger has; a logger with `log` also takes records at any level with structured fields (see
 * {@link logAt}, {@link jsonLinesLogger}).
 */
export interface Logger {
  warn(message: string, error?: unknown): void;
  /** One record at `level`, with fields. @defaultValue absent: {@link logAt} sends warn and error to `warn`, drops the rest */
  log?(level: LogLevel, message: string, fields?: LogFields, error?: unknown): void;
}
/** A logger that writes warnings to the console, prefixed `[steerlog]`. */
export const consoleLogger: Logger = { warn: (message, error) => console.warn(`[steerlog] ${message}`, error ?? '') };
/** A logger that discards everything (for tests). */
export const silentLogger: Logger = { warn: () => {} };

/** Logs through `logger.log` when it has one; else warn and error go to `warn` (fields in the line), the rest is dropped. */
export const logAt = (logger: Logger, level: LogLevel, message: string, fields?: LogFields, error?: unknown): void => {
  if (logger.log) return logger.log(level, message, fields, error);
  if (level !== 'warn' && level !== 'error') return;
  const where = fields ? Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : '';
  logger.warn(where === '' ? message : `${message} (${where})`, error);
};

/** Options of {@link jsonLinesLogger}. */
export interface JsonLinesLoggerOptions {
  /** Where each line goes (with its newline). */
  readonly write: (line: string) => void;
  /** Records below this level are dropped. @defaultValue 'info' */
  readonly level?: LogLevel;
  /** The time of each record (epoch ms). @defaultValue Date.now */
  readonly now?: () => number;
}

/** An error as a record shows it: its name, message and stable `code` when it has one (never its stack). */
const errorFields = (e: unknown): Record<string, unknown> => {
  if (!(e instanceof Error)) return { message: String(e) };
  const code = (e as { code?: unknown }).code;
  return { name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) };
};

/**
 * A logger that writes one JSON object per line: `{"time":<ISO>,"level":…,"msg":…,<fields>…,"error":{name,message,code}}`
 * — what `steerlog serve` writes on stderr by default.
 */
export const jsonLinesLogger = (options: JsonLinesLoggerOptions): Required<Logger> => {
  const min = LOG_LEVELS.indexOf(options.level ?? 'info');
  const now = options.now ?? Date.now;
  // the last record's second, kept: a record in the same second writes its ISO text with the milliseconds replaced
  // (`toISOString` ends in `.sssZ` for every date it can write)
  let lastSecond = Number.NaN;
  let secondPrefix = '';
  const isoOf = (time: number): string => {
    // a Date keeps whole milliseconds (its time value is truncated toward zero)
    const ms = Math.trunc(time);
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      const iso = new Date(ms).toISOString();
      secondPrefix = iso.slice(0, -4);
      lastSecond = second;
      return iso;
    }
    const milli = ms - second * 1000;
    return `${secondPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
  const log = (level: LogLevel, message: string, fields?: LogFields, error?: unknown): void => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const record: Record<string, unknown> = { time: isoOf(now()), level, msg: message };
    if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined && !(k in record)) record[k] = v;
    if (error !== undefined) record.error = errorFields(error);
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({ time: record.time, level, msg: message, fields: 'not JSON' });
    }
    options.write(`${line}\n`);
  };
  return { log, warn: (message, error) => log('warn', message, undefined, error) };
};
