/**
 * A random edit somewhere inside a JSON value, for property tests of validators: at the place `path` leads to, drop
 * a key, add one, or replace a value with `replacement`; `mode` picks which. A key added to an object is named by
 * `addedKey(mode)` (default `extra`).
 */
export const mutateJson = (value: unknown, path: readonly number[], replacement: unknown, mode: number, addedKey: (mode: number) => string = () => 'extra'): unknown => {
  if (typeof value !== 'object' || value === null) return replacement;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  if (entries.length === 0 || path.length === 0) {
    if (Array.isArray(value)) return mode % 2 === 0 ? [...value, replacement] : replacement;
    return mode % 3 === 0 ? { ...value, [addedKey(mode)]: replacement } : replacement;
  }
  const i = path[0]! % entries.length;
  const [key, child] = entries[i]!;
  if (Array.isArray(value)) return value.map((v, j) => (j === i ? mutateJson(child, path.slice(1), replacement, mode, addedKey) : v));
  const copy: Record<string, unknown> = { ...value };
  if (mode % 7 === 0 && path.length === 1) delete copy[key];
  else copy[key] = mutateJson(child, path.slice(1), replacement, mode, addedKey);
  return copy;
};
