import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Imports a user module (a projection). JavaScript loads directly; TypeScript loads through tsx when it is
 * installed (`npm i -D tsx`), otherwise the error says so.
 */
export const loadUserModule = async (path: string): Promise<Record<string, unknown>> => {
  const url = pathToFileURL(isAbsolute(path) ? path : resolve(process.cwd(), path)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
    let tsx: { register: () => unknown };
    try {
      tsx = (await import('tsx/esm/api')) as { register: () => unknown };
    } catch {
      throw new Error(`${path} is TypeScript: install tsx (npm i -D tsx) to load it, or compile it to JavaScript`);
    }
    tsx.register();
    // a new specifier: the failed load of `url` stays cached in the module map
    return (await import(`${url}?ts`)) as Record<string, unknown>;
  }
};
