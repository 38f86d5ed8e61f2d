import { traceIdOf } from '../../projections/telemetry/span-ids.js';
import type { Logger } from '../../runtime/logger.js';

/**
 * A logger that adds the trace id of the session a record names (`traceId`, derived from `sessionId` as the
 * telemetry derives it) when the record has none: a log line and the session's spans join on it. A logger without
 * `log` (structured fields) is returned as it is.
 */
export const withSessionTraceIds = (logger: Logger): Logger => {
  const log = logger.log;
  if (!log) return logger;
  return {
    warn: (message, error) => logger.warn(message, error),
    log: (level, message, fields, error) =>
      log.call(
        logger,
        level,
        message,
        fields !== undefined && typeof fields.sessionId === 'string' && fields.traceId === undefined ? { ...fields, traceId: traceIdOf(fields.sessionId) } : fields,
        error,
      ),
  };
};
