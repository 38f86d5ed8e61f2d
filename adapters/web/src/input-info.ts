import type { TimelineInput } from '../../../audit/session-timeline.js';

/** What the audit view's rows know of an input id: its last admission (text, actor, class, times). */
export interface InputInfo {
  /** The input's last admission, undefined while it is not loaded (asking for it loads it). */
  get(id: string): TimelineInput | undefined;
}

/** Options of {@link inputInfo}. */
export interface InputInfoOptions {
  /** Fetches the last admissions of up to 500 ids; null: only `held` is known. @defaultValue null */
  readonly fetchIds?: ((ids: readonly string[]) => Promise<readonly TimelineInput[]>) | null;
  /** Called when fetched admissions arrived (the view draws again). @defaultValue nothing */
  readonly onLoaded?: () => void;
}

/** Most ids one look-up names (the server's limit). */
const BATCH = 500;

/**
 * An {@link InputInfo} that knows `held` at once and fetches any other id the rows ask for, in batches: the ids
 * asked during one render go in one request. An id is asked once (again only after its request failed).
 */
export const inputInfo = (held: readonly TimelineInput[], options: InputInfoOptions = {}): InputInfo => {
  const by = new Map(held.map((i) => [i.id, i]));
  const fetchIds = options.fetchIds ?? null;
  const asked = new Set<string>();
  const queue: string[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const ids = queue.splice(0, BATCH);
    if (queue.length > 0) timer = setTimeout(flush, 0);
    fetchIds!(ids).then(
      (found) => {
        for (const i of found) by.set(i.id, i);
        options.onLoaded?.();
      },
      () => {
        for (const id of ids) asked.delete(id);
      },
    );
  };
  return {
    get(id) {
      const known = by.get(id);
      if (known !== undefined || fetchIds === null || asked.has(id)) return known;
      asked.add(id);
      queue.push(id);
      timer ??= setTimeout(flush, 0);
      return undefined;
    },
  };
};
