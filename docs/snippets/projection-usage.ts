import { share } from 'rxjs';
import type { EventStore } from '../../index.js';
import { FileCheckpointStore } from '../../adapters/checkpoints/index.js';
import { classificationFrames, defineProjection, queueFrames, runProjection, sessionEvents, sessionSteps } from '../../projections/index.js';

/** docs/projections.md §3: a custom projection with file checkpoints (in a package: `from 'steerlog/projections'`). */
export const turnsPerSessionExample = async (store: EventStore, checkpointDir: string) => {
  // #region custom-projection
  const turnsPerSession = defineProjection<{ turns: Record<string, number> }>({
    name: 'turns-per-session',
    version: 1,
    initialState: { turns: {} },
    filter: ({ event }) => event.type === 'turn/start',
    evolve: (state, { stream }) => {
      state.turns[stream] = (state.turns[stream] ?? 0) + 1;
      return state;
    },
  });

  const run = runProjection(turnsPerSession, { store, checkpoints: new FileCheckpointStore(checkpointDir) });
  await run.caughtUp;
  console.log(run.state());
  await run.stop();
  // #endregion custom-projection
  return run.state();
};

/** docs/projections.md §2: several views from one fold. */
export const sharedFramesExample = (store: EventStore, sessionId: string) => {
  // #region shared-frames
  const steps$ = sessionEvents(store, sessionId).pipe(sessionSteps(), share());
  const queue$ = steps$.pipe(queueFrames());
  const history$ = steps$.pipe(classificationFrames());
  // #endregion shared-frames
  return { queue$, history$ };
};
