import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm ci` warns EBADENGINE for every installed package whose `engines.node` the running Node does not satisfy.
// steerlog promises Node >= 20 (package.json engines): what a user installs with it must admit Node 20.0.0, and
// nothing the project installs may warn on the Node this suite runs on.

type Version = readonly [number, number, number];

const parse = (text: string): Version => {
  const [a = '0', b = '0', c = '0'] = text.replace(/^v/, '').split('.');
  const n = (s: string) => (s === 'x' || s === '*' ? 0 : Number.parseInt(s, 10));
  return [n(a), n(b), n(c)];
};
const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** One comparator of a range (`>=1.2`, `^20.19.0`, `~1.2`, `8.*`, `10.x`, `1.2.3`) against a version. */
const satisfiesOne = (v: Version, comparator: string): boolean => {
  const m = /^(>=|<=|>|<|\^|~|=)?\s*v?([\d.x*]+)$/.exec(comparator);
  if (!m) throw new Error(`cannot read the engines comparator ${comparator}`);
  const op = m[1] ?? '';
  const parts = m[2]!.split('.');
  const at = parse(m[2]!);
  const wild = parts.length < 3 || parts.some((p) => p === 'x' || p === '*');
  switch (op) {
    case '>=':
      return compare(v, at) >= 0;
    case '>':
      return compare(v, at) > 0;
    case '<=':
      return compare(v, at) <= 0;
    case '<':
      return compare(v, at) < 0;
    case '^':
      return compare(v, at) >= 0 && (at[0] !== 0 ? v[0] === at[0] : v[0] === 0 && v[1] === at[1]);
    case '~':
      return compare(v, at) >= 0 && v[0] === at[0] && v[1] === at[1];
    default:
      if (!wild) return compare(v, at) === 0;
      // 8.* or 8: any 8.x.y; 13.7: any 13.7.y
      return parts.every((p, i) => p === 'x' || p === '*' || Number.parseInt(p, 10) === v[i]);
  }
};

/** Does `version` satisfy the npm range `range` (alternatives `||`, each a space-separated list of comparators)? */
const satisfies = (version: string, range: string): boolean => {
  const v = parse(version);
  return range.split('||').some((alt) => {
    const comparators = alt.trim().replace(/(>=|<=|>|<|\^|~|=)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comparators.every((c) => satisfiesOne(v, c));
  });
};

interface LockEntry {
  readonly dev?: boolean;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string } | readonly string[];
}
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string }; dependencies: Record<string, string> };
const nodeRange = (e: LockEntry): string | null => (e.engines && !Array.isArray(e.engines) ? ((e.engines as { node?: string }).node ?? null) : null);

describe('engines', () => {
  it('reads npm ranges as npm does, on the forms the lock holds', () => {
    expect(satisfies('20.0.0', '>=20')).toBe(true);
    expect(satisfies('20.0.0', '>=22')).toBe(false);
    expect(satisfies('20.20.2', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('20.0.0', '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies('20.0.0', '6.* || 8.* || >= 10.*')).toBe(true);
    expect(satisfies('9.1.0', '6.* || 8.* || >= 10.*')).toBe(false);
    expect(satisfies('20.0.0', '>= 10.x')).toBe(true);
  });

  it('every package a user installs with steerlog admits the oldest Node it promises (no EBADENGINE on Node 20)', () => {
    expect(pkg.engines.node).toBe('>=20');
    const refused = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && !e.dev && nodeRange(e) !== null && !satisfies('20.0.0', nodeRange(e)!))
      .map(([path, e]) => `${path} (${nodeRange(e)})`);
    expect(refused).toEqual([]);
    // RFC 8785 is steerlog's own code (runtime/chain-hash.ts); the canonicalize package is only a test's reference
    expect(Object.keys(pkg.dependencies)).not.toContain('canonicalize');
  });

  it('nothing the project installs warns on the Node this suite runs on', () => {
    const refused = Object.entries(lock.packages)
      .filter(([path, e]) => path !== '' && !e.optional && nodeRange(e) !== null && !satisfies(process.version, nodeRange(e)!))
      .map(([path, e]) => `${path} (${nodeRange(e)})`);
    expect(refused).toEqual([]);
  });
});
