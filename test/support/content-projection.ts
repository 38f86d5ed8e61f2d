import { defineProjection } from '../../projections/index.js';

/** A projection that keeps the text of every user message it folds: what a checkpoint would leak if it saw plaintext. */
export default defineProjection<{ texts: string[] }>({
  name: 'test-content-keeper',
  version: 1,
  initialState: { texts: [] },
  evolve: (state, { event }) =>
    event.type === 'user/message' ? { texts: [...state.texts, ...event.data.content.map((b) => (b.type === 'text' ? b.text : ''))] } : state,
});
