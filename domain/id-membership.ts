/**
 * A membership test over a few ids, for a question asked `others` times: a plain search while the two counts are
 * small (no set to build), a Set past that, so asking about every item of one batch in another costs
 * O(ids + others), never O(ids × others). Pure.
 */
export const memberOf = (ids: readonly string[], others: number): ((id: string) => boolean) => {
  if (ids.length === 0) return () => false;
  if (ids.length * others <= 64) return (id) => ids.includes(id);
  const set = new Set(ids);
  return (id) => set.has(id);
};
