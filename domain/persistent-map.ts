/**
 * A persistent map, read as a `ReadonlyMap`: `with` returns a new version and the old one never changes for its
 * holders. As with the persistent set (persistent-set.ts), one version of a family owns a mutable Map (the root) and
 * every other version keeps the one-entry change that leads from its neighbour back to it; reading a version moves
 * the root to it, one O(1) step per change in between. Setting on the newest version is O(1), where copying the map
 * per change would make a fold over a log with many keys (children, say) quadratic. Iteration follows the root
 * Map's order: the order in which keys were first set, as a Map built by the same `set` calls would iterate.
 */
type Node<K, V> = { kind: 'root'; map: Map<K, V> } | { kind: 'diff'; next: PersistentMap<K, V>; key: K; present: boolean; value: V | undefined };

/** A version of a persistent map (see the module comment). */
export class PersistentMap<K, V> implements ReadonlyMap<K, V> {
  /** This version's place in its family: the root, or the change that leads towards it. */
  #node: Node<K, V>;

  private constructor(node: Node<K, V>) {
    this.#node = node;
  }

  /** A new empty map (each call starts its own family). */
  static empty<K, V>(): PersistentMap<K, V> {
    return new PersistentMap<K, V>({ kind: 'root', map: new Map() });
  }

  /** The map with `key` set to `value`: O(1) on the newest version of a family. */
  with(key: K, value: V): PersistentMap<K, V> {
    const map = this.#root();
    const present = map.has(key);
    const old = map.get(key);
    if (present && old === value) return this;
    map.set(key, value);
    const next = new PersistentMap<K, V>({ kind: 'root', map });
    this.#node = { kind: 'diff', next, key, present, value: old };
    return next;
  }

  /** This version's entries as the root Map (moving the root here first). */
  #root(): Map<K, V> {
    if (this.#node.kind === 'root') return this.#node.map;
    const path: PersistentMap<K, V>[] = [];
    let cursor: PersistentMap<K, V> = this;
    while (cursor.#node.kind === 'diff') {
      path.push(cursor);
      cursor = cursor.#node.next;
    }
    const map = cursor.#node.map;
    // walk back from the root to this version, undoing each change and leaving its inverse behind
    let holder: PersistentMap<K, V> = cursor;
    for (let i = path.length - 1; i >= 0; i--) {
      const target = path[i]!;
      const diff = target.#node as Extract<Node<K, V>, { kind: 'diff' }>;
      const wasPresent = map.has(diff.key);
      const was = map.get(diff.key);
      if (diff.present) map.set(diff.key, diff.value as V);
      else map.delete(diff.key);
      holder.#node = { kind: 'diff', next: target, key: diff.key, present: wasPresent, value: was };
      holder = target;
    }
    this.#node = { kind: 'root', map };
    return map;
  }

  get size(): number {
    return this.#root().size;
  }
  get(key: K): V | undefined {
    return this.#root().get(key);
  }
  has(key: K): boolean {
    return this.#root().has(key);
  }
  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.#root()) callback.call(thisArg, v, k, this);
  }
  entries(): MapIterator<[K, V]> {
    return this.#root().entries();
  }
  keys(): MapIterator<K> {
    return this.#root().keys();
  }
  values(): MapIterator<V> {
    return this.#root().values();
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#root()[Symbol.iterator]();
  }
}
