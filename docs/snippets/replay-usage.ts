import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replayCheck, type Agent, type LogEvent, type ReplayCheckResult } from '../../index.js';

// #region replay-check
/**
 * CI: replays every recorded session of a folder (one JSONL log each, as `steerlog export` writes them) against
 * today's steerlog and the deployment's hooks, and returns what each replay found.
 */
export const checkRecordedSessions = async (folder: string, install: (agent: Agent) => void): Promise<Map<string, ReplayCheckResult>> => {
  const results = new Map<string, ReplayCheckResult>();
  for (const name of (await readdir(folder)).filter((n) => n.endsWith('.jsonl')).sort()) {
    const events = (await readFile(join(folder, name), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as LogEvent);
    results.set(name, await replayCheck(events, { install }));
  }
  return results;
};
// #endregion replay-check
