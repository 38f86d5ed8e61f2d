/** Where the runtime reports what it contains (a throwing listener, a failed background write). */
export interface Logger {
  warn(message: string, error?: unknown): void;
}
export const consoleLogger: Logger = { warn: (message, error) => console.warn(`[steerlog] ${message}`, error ?? '') };
export const silentLogger: Logger = { warn: () => {} };
