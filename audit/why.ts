import type { EventStore } from '../runtime/ports/event-store.js';
import { createKeyring, type Keyring } from '../runtime/content-opener.js';
import { resolveFileFormat, type FormatOption } from './log-format.js';
import { fileEnvelopeBatches, storeEnvelopeBatches } from './log-sources.js';
import { answerWhy } from './why-answer.js';
import { followAcross } from './why-across.js';
import { answerWhyHarness } from './why-harness.js';
import type { WhyOutput } from './why-output.js';

/**
 * The `why` use case: the whole life of one input (admitted, claimed, entered / dropped / rejected / canceled /
 * pending) or tool call in a session log, from a log file (steerlog envelopes or a harness log) or a stored session
 * (followed across to its parent or children). `steerlog why` prints it; `--json` prints `WhyOutput` as it is.
 */

export { answerWhy } from './why-answer.js';
export type { ToolCallLife, WhyContent, WhyCrossing, WhyFailedRequest, WhyOutput } from './why-output.js';

/** How `whyInFile` reads its file. */
export interface WhyInFileOptions {
  /** The file's format; `auto` recognises it by its first bytes. @defaultValue 'auto' */
  readonly format?: FormatOption;
  /** The data keys that open sealed content. @defaultValue none: sealed content shows as [encrypted] */
  readonly keyring?: Keyring;
}

/** The answer about `id` in a log file: a steerlog envelope log, or a harness session log (seqs are harness seq + 1). */
export const whyInFile = async (file: string, id: string, options: WhyInFileOptions = {}): Promise<WhyOutput> => {
  const keyring = options.keyring ?? createKeyring(null);
  return (await resolveFileFormat(file, options.format ?? 'auto')) === 'dsh'
    ? answerWhyHarness(file, id, keyring, answerWhy)
    : answerWhy(null, id, fileEnvelopeBatches(file), keyring);
};

/**
 * The answer about `id` in the stored session `session`, followed to or from the session's parent or children
 * (`crossing`); null when the store holds no such session.
 */
export const whyInStore = async (store: EventStore, session: string, id: string, keyring: Keyring = createKeyring(null)): Promise<WhyOutput | null> => {
  const found = await answerWhy(session, id, storeEnvelopeBatches(store, session), keyring);
  if (found.events === 0 && !found.error) return null;
  return { ...found, crossing: await followAcross(store, session, found, (s, i) => answerWhy(s, i, storeEnvelopeBatches(store, s), keyring)) };
};

/**
 * The `why` use case's verdict on its answer: `answered`; `invalid` when the log is invalid before its end (the
 * answer covers what precedes); `unknown-id` when neither the log nor a crossing knows the id.
 */
export type WhyVerdict = 'answered' | 'invalid' | 'unknown-id';

/** The verdict of a {@link WhyOutput} (`steerlog why` exits 0, 1 or 2 on it). */
export const whyVerdict = (answer: WhyOutput): WhyVerdict =>
  answer.error ? 'invalid' : answer.found === 'none' && answer.crossing === null ? 'unknown-id' : 'answered';
