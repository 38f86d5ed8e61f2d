import { defineKeyedProjection } from '../../projections/index.js';

/**
 * A keyed projection (one count per session) that cannot apply a user message whose text is `poison`: under the
 * `stop` policy its worker fails there, and the partition keeps a lag that does not move (the observability tests
 * of `serve --projection`).
 */
export default defineKeyedProjection<{ messages: number }>({
  name: 'test-stuck',
  version: 1,
  initialState: { messages: 0 },
  filter: ({ event }) => event.type === 'user/message',
  evolve: (state, { event }) => {
    if (event.type === 'user/message' && event.data.content.some((b) => b.type === 'text' && b.text === 'poison')) throw new Error('poisoned');
    return { messages: state.messages + 1 };
  },
});
