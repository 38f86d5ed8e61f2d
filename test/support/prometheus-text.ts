/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for the tests of `/metrics`: it throws at the
 * first line that breaks the format or its rules (a sample without a TYPE, a second TYPE, bad label syntax,
 * histogram buckets that are not cumulative or whose +Inf bucket differs from the count).
 */
/** One sample line: its name (with `_bucket`/`_sum`/`_count` for a histogram's), labels and value. */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}
/** A parsed exposition: each family's TYPE, and the samples in order. */
export interface Exposition {
  readonly types: Map<string, string>;
  readonly samples: Sample[];
}
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Parses an exposition, throwing at the first line that breaks the format or its rules. */
export const parseExposition = (text: string): Exposition => {
  if (!text.endsWith('\n')) throw new Error('the exposition ends with a newline');
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const samples: Sample[] = [];
  const familyOf = (name: string): string | undefined => {
    if (types.has(name)) return name;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    return types.get(base) === 'histogram' ? base : undefined;
  };
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!m) throw new Error(`${where}: a comment other than HELP or TYPE`);
      if (!NAME.test(m[2]!)) throw new Error(`${where}: bad metric name`);
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!)) throw new Error(`${where}: unknown type`);
        if (types.has(m[2]!)) throw new Error(`${where}: a second TYPE`);
        if (samples.some((s) => familyOf(s.name) === m[2])) throw new Error(`${where}: TYPE after samples`);
        types.set(m[2]!, m[3]!);
      } else {
        if (helped.has(m[2]!)) throw new Error(`${where}: a second HELP`);
        helped.add(m[2]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`${where}: not a sample`);
    const labels: Record<string, string> = {};
    let rest = m[3] ?? '';
    while (rest !== '') {
      const lm = /^([^=]+)="((?:[^"\\]|\\[\\"n])*)"(,|$)/.exec(rest);
      if (!lm || !LABEL.test(lm[1]!)) throw new Error(`${where}: bad labels at ${rest}`);
      if (lm[1]! in labels) throw new Error(`${where}: label ${lm[1]} twice`);
      labels[lm[1]!] = lm[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(lm[0].length);
    }
    const raw = m[4]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? NaN : Number(raw);
    if (raw === '' || (Number.isNaN(value) && raw !== 'NaN')) throw new Error(`${where}: bad value`);
    if (familyOf(m[1]!) === undefined) throw new Error(`${where}: a sample without a TYPE`);
    samples.push({ name: m[1]!, labels, value });
  }
  // histograms: cumulative buckets ending at +Inf, which equals _count
  for (const [name, type] of types) {
    if (type !== 'histogram') continue;
    const bySeries = new Map<string, Sample[]>();
    for (const s of samples.filter((x) => x.name === `${name}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${name}: a bucket without le`);
      const key = JSON.stringify(rest);
      bySeries.set(key, [...(bySeries.get(key) ?? []), s]);
    }
    for (const [key, buckets] of bySeries) {
      const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
      if (les.at(-1) !== Infinity) throw new Error(`${name}${key}: no +Inf bucket`);
      for (let j = 1; j < buckets.length; j++) {
        if (!(les[j]! > les[j - 1]!) || buckets[j]!.value < buckets[j - 1]!.value) throw new Error(`${name}${key}: buckets not cumulative`);
      }
      const count = samples.find((x) => x.name === `${name}_count` && JSON.stringify(x.labels) === key);
      if (count?.value !== buckets.at(-1)!.value) throw new Error(`${name}${key}: +Inf bucket != count`);
    }
  }
  return { types, samples };
};
/** The value of the first sample named `name` whose labels include `labels`. */
/** The value of the first sample named `name` whose labels include `labels`. */
export const value = (e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined =>
  e.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
