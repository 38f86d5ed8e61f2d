/**
 * One session's export hand-over, recorded for the benchmarks of the export worker's path: a runtime on a memory
 * store with the scripted model runs `turns` follow-up turns of a shape, with a telemetry port that writes what the
 * runtime's thread would hand to the worker, cut every 100 turns. The checkout's modules are arguments (this file
 * imports only types), so a benchmark that loads another checkout with `--checkout` records with that checkout's code.
 */
import type { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import type { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type * as HandOverModule from '../../adapters/telemetry/log-handover.js';
import type { createUserMessage } from '../../domain/message.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import type { createRuntime } from '../../runtime/runtime.js';
import type { silentLogger } from '../../runtime/logger.js';
import { followupTurns, shapeAnswer, type TurnShape } from './turn-loop.js';

/** The pieces of a checkout a recording runs on. */
export interface RecordingModules<W> {
  readonly ScriptedModel: typeof ScriptedModel;
  readonly MemoryEventStore: typeof MemoryEventStore;
  readonly createUserMessage: typeof createUserMessage;
  readonly createRuntime: typeof createRuntime;
  readonly silentLogger: typeof silentLogger;
  readonly pushFollow: typeof HandOverModule.pushFollow;
  readonly pushObserve: typeof HandOverModule.pushObserve;
  readonly pushForget: typeof HandOverModule.pushForget;
  readonly pushOperation: typeof HandOverModule.pushOperation;
  /** A new, empty hand-over being written. */
  readonly newWriter: () => W;
  /** What a writer hands over (what the runtime's thread posts to the worker). */
  readonly take: (writer: W) => unknown;
}

/** The runtime's pieces of a recording, without the hand-over's (which differ between checkouts). */
export type RecordingRuntime = Pick<RecordingModules<unknown>, 'ScriptedModel' | 'MemoryEventStore' | 'createUserMessage' | 'createRuntime' | 'silentLogger'>;

/**
 * Loads a recording's runtime pieces from the TypeScript sources of the checkout at `root` (run under tsx), so that
 * a benchmark given `--checkout` records with that checkout's runtime.
 */
export const importRecordingRuntime = async (root: string): Promise<RecordingRuntime> => {
  const { ScriptedModel } = (await import(`${root}/adapters/model/scripted/scripted-model.ts`)) as typeof import('../../adapters/model/scripted/scripted-model.js');
  const { MemoryEventStore } = (await import(`${root}/adapters/store/memory/memory-event-store.ts`)) as typeof import('../../adapters/store/memory/memory-event-store.js');
  const { createUserMessage } = (await import(`${root}/domain/message.ts`)) as typeof import('../../domain/message.js');
  const { createRuntime } = (await import(`${root}/runtime/runtime.ts`)) as typeof import('../../runtime/runtime.js');
  const { silentLogger } = (await import(`${root}/runtime/logger.ts`)) as typeof import('../../runtime/logger.js');
  return { ScriptedModel, MemoryEventStore, createUserMessage, createRuntime, silentLogger };
};

/** The session id of the recording: UUID length, as a session's id usually is. */
export const RECORDED_SESSION_ID = 'a5c0e1f2-3b4d-4e6f-8a9b-0c1d2e3f4a5b';

/**
 * Runs `turns` turns of `shape` in one session and returns its hand-over in chunks of 100 turns (the last chunk holds
 * the rest and the session's end).
 */
export const recordHandOver = async <W>(m: RecordingModules<W>, shape: TurnShape, turns: number): Promise<unknown[]> => {
  const chunks: unknown[] = [];
  let records = m.newWriter();
  const recorder: SessionTelemetry = {
    follow: (s, h) => m.pushFollow(records as never, s, h),
    observe: (s, e, d) => m.pushObserve(records as never, s, e, d),
    forget: (s) => m.pushForget(records as never, s),
    storeOperation: (op) => m.pushOperation(records as never, op),
  };
  const model = new m.ScriptedModel([], { whenExhausted: shapeAnswer(shape) });
  const runtime = m.createRuntime({ store: new m.MemoryEventStore(), model, logger: m.silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], telemetry: recorder });
  const agent = runtime.createSession({ sessionId: RECORDED_SESSION_ID });
  await followupTurns([agent], turns, () => m.createUserMessage('go'), (_, t) => {
    if (t % 100 === 99) {
      chunks.push(m.take(records));
      records = m.newWriter();
    }
  });
  await agent.dispose();
  chunks.push(m.take(records));
  return chunks;
};
