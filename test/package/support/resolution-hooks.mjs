// Module customization hooks (they run on the loader thread): record each resolved URL.
import { appendFileSync } from 'node:fs';

let log;
export const initialize = (data) => {
  log = data.log;
};
export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context);
  if (log) appendFileSync(log, `${resolved.url}\n`);
  return resolved;
};
