import type { LogFields, Logger } from './logger.js';

/**
 * A session's view of the runtime's logger: every record it writes names the session (`sessionId`), so a warning of
 * the write-behind, an agent or a tool run says which session it is about. Only for a logger that takes structured
 * fields (`log`); a logger with `warn` alone is returned as it is (its lines stay what they were).
 */
export const sessionLogger = (logger: Logger, sessionId: string): Logger => {
  const log = logger.log;
  if (!log) return logger;
  const at = (fields?: LogFields): LogFields => (fields === undefined ? { sessionId } : { sessionId, ...fields });
  return {
    warn: (message, error) => log.call(logger, 'warn', message, at(), error),
    log: (level, message, fields, error) => log.call(logger, level, message, at(fields), error),
  };
};
