import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from './browser.js';
import { removeDir, startServe, type ServeProcess } from './serve-process.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What a console suite runs against: a JSONL store dir, a real `steerlog serve` on it, and a Chromium page. */
export interface ConsoleFixture {
  readonly dir: string;
  readonly serve: ServeProcess;
  readonly context: BrowserContext;
  readonly profile: string;
  readonly page: Page;
}

/** Options of {@link openConsole}. */
export interface OpenConsoleOptions {
  /** More `steerlog serve` arguments (e.g. `--token`). @defaultValue none */
  readonly serveArgs?: readonly string[];
}

/**
 * Starts a console suite: refuses when the console is not built, makes a store dir (`prefix`), lets `prepare` fill
 * it (given its store spec), starts `steerlog serve` on it and opens Chromium.
 */
export const openConsole = async (prefix: string, prepare?: (spec: string) => Promise<void>, options: OpenConsoleOptions = {}): Promise<ConsoleFixture> => {
  if (!existsSync(join(ROOT, 'dist/console/index.html'))) throw new Error('dist/console is not built: run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), prefix));
  await prepare?.(`jsonl:${dir}`);
  const serve = await startServe(`jsonl:${dir}`, options.serveArgs ?? []);
  const { context, profile } = await launchBrowser();
  const page = context.pages()[0] ?? (await context.newPage());
  return { dir, serve, context, profile, page };
};

/** Closes what `openConsole` opened (whatever part of it a failed start left), and removes its dirs. */
export const closeConsole = async (f: Partial<Omit<ConsoleFixture, 'page'>>): Promise<void> => {
  await f.context?.close();
  await f.serve?.stop();
  if (f.serve) removeDir(f.serve.gateDir);
  if (f.profile) rmSync(f.profile, { recursive: true, force: true });
  if (f.dir) removeDir(f.dir);
};
