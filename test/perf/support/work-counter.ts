/**
 * An injected counter of collection work, for the adversarial guard (test/perf/adversarial-work.test.ts): while
 * installed, every built-in operation that walks, copies or searches an Array, a Map or a Set counts the elements it
 * touches — `slice`, `concat`, spreads and `for…of` (through the iterators), `Array.from`, `map`, `filter`,
 * `find`, `includes`, `indexOf`, `new Map(map)`, `new Set(set)`, … — whoever calls it. A fold that copies or
 * searches a collection that grows with the log, once per event, walks thousands of elements per event; one that
 * does per-event work walks a handful. It counts, it never times.
 *
 * Installing it replaces built-ins process-wide (V8 then leaves its fast paths for good), so the test that uses it
 * runs in a process of its own (vitest.config.ts, ISOLATED_FILES).
 */

/** Elements touched, by operation. */
export interface WorkCount {
  total: number;
  readonly byOp: Record<string, number>;
}

type Fn = (this: unknown, ...args: unknown[]) => unknown;

/** Counts the elements the built-ins touch while `run` runs (awaited), then restores every built-in. */
export const countWork = async (run: () => unknown): Promise<WorkCount> => {
  const count: WorkCount = { total: 0, byOp: {} };
  const add = (op: string, n: number): void => {
    count.total += n;
    count.byOp[op] = (count.byOp[op] ?? 0) + n;
  };
  const restore: (() => void)[] = [];
  const patch = (target: object, key: string | symbol, make: (original: Fn) => Fn): void => {
    const original = (target as Record<string | symbol, Fn>)[key as string]!;
    const descriptor = Object.getOwnPropertyDescriptor(target, key)!;
    Object.defineProperty(target, key, { ...descriptor, value: make(original) });
    restore.push(() => Object.defineProperty(target, key, descriptor));
  };
  /** An iterator that counts every element it yields. */
  const counted = (op: string, original: Fn): Fn =>
    function (this: unknown, ...args: unknown[]) {
      const it = original.apply(this, args) as Iterator<unknown>;
      return {
        next() {
          const r = it.next();
          if (!r.done) add(op, 1);
          return r;
        },
        [Symbol.iterator]() {
          return this;
        },
      };
    };
  const ap = Array.prototype;
  const indexOf = ap.indexOf as Fn;
  const lastIndexOf = ap.lastIndexOf as Fn;
  const len = (a: unknown): number => (a as { length: number }).length;
  // walks and copies: every element of the receiver (or of the result)
  for (const key of ['map', 'filter', 'forEach', 'reduce', 'reduceRight', 'join', 'flatMap', 'flat', 'reverse', 'sort', 'fill', 'toSorted', 'toReversed']) {
    if (!(key in ap)) continue;
    patch(ap, key, (original) =>
      function (this: unknown, ...args: unknown[]) {
        add(`Array.${key}`, len(this));
        return original.apply(this, args);
      },
    );
  }
  for (const key of ['slice', 'concat']) {
    patch(ap, key, (original) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        add(`Array.${key}`, len(result));
        return result;
      },
    );
  }
  // a splice moves every element after the cut
  patch(ap, 'splice', (original) =>
    function (this: unknown, ...args: unknown[]) {
      const n = len(this);
      const start = Number(args[0] ?? 0);
      add('Array.splice', Math.max(1, n - (start < 0 ? Math.max(0, n + start) : Math.min(start, n))));
      return original.apply(this, args);
    },
  );
  // searches: the elements looked at
  for (const key of ['find', 'findIndex', 'findLast', 'findLastIndex', 'some', 'every', 'includes', 'indexOf', 'lastIndexOf']) {
    if (!(key in ap)) continue;
    patch(ap, key, (original) =>
      function (this: unknown, ...args: unknown[]) {
        const n = len(this);
        if (typeof args[0] !== 'function') {
          const at = (key === 'lastIndexOf' ? lastIndexOf.apply(this, args) : indexOf.call(this, args[0])) as number;
          add(`Array.${key}`, at < 0 ? n : key === 'lastIndexOf' ? n - at : at + 1);
          return original.apply(this, args);
        }
        let seen = 0;
        const predicate = args[0] as Fn;
        const result = original.call(
          this,
          function (this: unknown, ...a: unknown[]) {
            seen++;
            return predicate.apply(this, a);
          },
          args[1],
        );
        add(`Array.${key}`, seen);
        return result;
      },
    );
  }
  patch(ap, Symbol.iterator, (original) => counted('Array iterator', original));
  patch(ap, 'values', (original) => counted('Array iterator', original));
  patch(ap, 'entries', (original) => counted('Array iterator', original));
  patch(ap, 'keys', (original) => counted('Array iterator', original));
  patch(Array, 'from', (original) =>
    function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      add('Array.from', len(result));
      return result;
    },
  );
  for (const [name, proto] of [
    ['Map', Map.prototype],
    ['Set', Set.prototype],
  ] as const) {
    for (const key of [Symbol.iterator, 'entries', 'values', 'keys'] as const) patch(proto, key, (original) => counted(`${name} iterator`, original));
    patch(proto, 'forEach', (original) =>
      function (this: unknown, ...args: unknown[]) {
        add(`${name}.forEach`, (this as { size: number }).size);
        return original.apply(this, args);
      },
    );
  }
  try {
    await run();
  } finally {
    for (let i = restore.length - 1; i >= 0; i--) restore[i]!();
  }
  return count;
};
