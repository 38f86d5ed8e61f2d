/** Where the runtime reports what it contains (a throwing listener, a failed background write). */
export interface Logger {
  warn(message: string, error?: unknown): void;
}
/** A logger that writes warnings to the console, prefixed `[steerlog]`. */
export const consoleLogger: Logger = { warn: (message, error) => console.warn(`[steerlog] ${message}`, error ?? '') };
/** A logger that discards everything (for tests). */
export const silentLogger: Logger = { warn: () => {} };
