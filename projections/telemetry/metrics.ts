import type { LogEvent } from '../../domain/events.js';
import { createSessionMetricFold, type SessionMetricFold, type SessionMetricSink } from './session-metric-fold.js';

/**
 * Metrics in the Prometheus text exposition format (version 0.0.4): counters, gauges and histograms with labels,
 * kept in memory and rendered on demand; and the session metrics that are a fold of the log (turn, step, model and
 * tool durations, token usage, admitted→claimed latency), fed one event at a time. Pure: no I/O, no timers.
 */

/** Label names and values of one series. */
export type MetricLabels = Readonly<Record<string, string>>;

/** The default histogram buckets for durations, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Histogram buckets for counts (events per append batch). */
export const COUNT_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

type Kind = 'counter' | 'gauge' | 'histogram';

interface Series {
  readonly labels: MetricLabels;
  value: number;
  /** Histogram only: cumulative counts per bucket, the sum and the count. */
  readonly buckets?: number[];
  sum: number;
  count: number;
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly kind: Kind;
  readonly buckets: readonly number[];
  readonly series: Map<string, Series>;
  /** A gauge (or counter) read at render time, instead of set series. */
  readonly collect?: () => readonly { readonly labels: MetricLabels; readonly value: number }[];
}

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const labelText = (labels: MetricLabels, extra?: readonly [string, string]): string => {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
};
/**
 * The key of a series: its labels in their order, each name and value prefixed with its length (one key per list of
 * entries, as the JSON of `Object.entries` was, built without it: the registry keys every observation).
 */
const keyOf = (labels: MetricLabels): string => {
  let key = '';
  for (const name in labels) {
    if (!Object.hasOwn(labels, name)) continue;
    const value = labels[name]!;
    key += `${name.length}:${name}${value.length}:${value}`;
  }
  return key;
};
const num = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

/** Observes `value` into a histogram series of `buckets`: each bucket it falls in, the sum and the count. */
const observeInto = (buckets: readonly number[], s: Series, value: number): void => {
  for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]!) s.buckets![i]!++;
  s.sum += value;
  s.count++;
};

/** A metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** An in-memory metrics registry rendered in the Prometheus text format. */
export class MetricsRegistry {
  readonly #families = new Map<string, Family>();

  #family(name: string, help: string, kind: Kind, buckets: readonly number[] = [], collect?: Family['collect']): Family {
    const known = this.#families.get(name);
    if (known) {
      if (known.kind !== kind) throw new TypeError(`metric ${name} is a ${known.kind}, not a ${kind}`);
      return known;
    }
    if (!NAME.test(name)) throw new TypeError(`metric name ${JSON.stringify(name)} is not a Prometheus metric name`);
    const family: Family = { name, help, kind, buckets, series: new Map(), ...(collect ? { collect } : {}) };
    this.#families.set(name, family);
    return family;
  }

  #series(family: Family, labels: MetricLabels): Series {
    const key = keyOf(labels);
    let s = family.series.get(key);
    if (!s) {
      s = { labels, value: 0, sum: 0, count: 0, ...(family.kind === 'histogram' ? { buckets: family.buckets.map(() => 0) } : {}) };
      family.series.set(key, s);
    }
    return s;
  }

  /** Declares a counter (so it is listed, at 0, before anything counts). */
  counter(name: string, help: string): void {
    this.#family(name, help, 'counter');
  }
  /** Adds `by` (default 1) to a counter's series. */
  inc(name: string, help: string, labels: MetricLabels = {}, by = 1): void {
    this.#series(this.#family(name, help, 'counter'), labels).value += by;
  }
  /** Sets a gauge's series. */
  set(name: string, help: string, labels: MetricLabels, value: number): void {
    this.#series(this.#family(name, help, 'gauge'), labels).value = value;
  }
  /** A counter whose series are read when the registry renders (a count kept elsewhere, never decreasing). */
  counterFrom(name: string, help: string, collect: () => readonly { readonly labels: MetricLabels; readonly value: number }[]): void {
    this.#family(name, help, 'counter', [], collect);
  }
  /** A gauge whose series are read when the registry renders. */
  gauge(name: string, help: string, collect: () => readonly { readonly labels: MetricLabels; readonly value: number }[]): void {
    this.#family(name, help, 'gauge', [], collect);
  }
  /** Declares a histogram (listed with empty buckets before anything is observed). */
  histogram(name: string, help: string, buckets: readonly number[] = DURATION_BUCKETS): void {
    this.#family(name, help, 'histogram', buckets);
  }
  /** Observes one value into a histogram's series. */
  observe(name: string, help: string, labels: MetricLabels, value: number, buckets: readonly number[] = DURATION_BUCKETS): void {
    const family = this.#family(name, help, 'histogram', buckets);
    observeInto(family.buckets, this.#series(family, labels), value);
  }
  /**
   * One histogram series (created now, listed from now on), to observe into without naming its labels again: what a
   * caller that observes the same series many times keeps (`observe` looks the series up by its labels every time).
   */
  histogramSeries(name: string, help: string, labels: MetricLabels, buckets: readonly number[] = DURATION_BUCKETS): (value: number) => void {
    const family = this.#family(name, help, 'histogram', buckets);
    const s = this.#series(family, labels);
    return (value) => observeInto(family.buckets, s, value);
  }
  /** One counter series (created now, listed from now on), to add to without naming its labels again. */
  counterSeries(name: string, help: string, labels: MetricLabels): (by: number) => void {
    const s = this.#series(this.#family(name, help, 'counter'), labels);
    return (by) => {
      s.value += by;
    };
  }

  /** Every family in the Prometheus text exposition format (version 0.0.4), in declaration order. */
  render(): string {
    const out: string[] = [];
    for (const f of this.#families.values()) {
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.kind}`);
      if (f.collect) {
        for (const s of f.collect()) out.push(`${f.name}${labelText(s.labels)} ${num(s.value)}`);
        continue;
      }
      for (const s of f.series.values()) {
        if (f.kind !== 'histogram') {
          out.push(`${f.name}${labelText(s.labels)} ${num(s.value)}`);
          continue;
        }
        f.buckets.forEach((le, i) => out.push(`${f.name}_bucket${labelText(s.labels, ['le', num(le)])} ${s.buckets![i]}`));
        out.push(`${f.name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${s.count}`, `${f.name}_sum${labelText(s.labels)} ${num(s.sum)}`, `${f.name}_count${labelText(s.labels)} ${s.count}`);
      }
    }
    return `${out.join('\n')}\n`;
  }
}

/** The metric names the session fold feeds (see docs/observability.md). */
export const SESSION_METRICS = {
  turnDuration: 'steerlog_turn_duration_seconds',
  stepDuration: 'steerlog_step_duration_seconds',
  modelDuration: 'gen_ai_client_operation_duration_seconds',
  toolDuration: 'steerlog_tool_duration_seconds',
  tokens: 'gen_ai_client_token_usage_total',
  claimLatency: 'steerlog_inbox_claim_latency_seconds',
} as const;

const HELP = {
  turn: 'Duration of a turn, turn/start to turn/end (by end reason)',
  step: 'Duration of a step, step/start to step/end',
  model: 'Duration of a model request (GenAI chat operation), by model and error type',
  tool: 'Duration of a tool call, tool/call to tool/result, by tool and error type',
  tokens: 'Tokens the model reported, by type (input, output) and model',
  claim: 'Time from a message admitted to its claim, by class (prompt, steering, context)',
} as const;

/** Feeds the session metrics from the events of live sessions. */
export interface SessionMetrics {
  /** One event of `sessionId`'s log, in order. A session's first event may be any seq (a resumed session). */
  readonly observe: (sessionId: string, event: LogEvent) => void;
  /**
   * Starts following a session from the history it already has (a resumed session): folded, not counted, so the
   * events after it are. Replaces what was followed of it.
   */
  readonly follow: (sessionId: string, history: Iterable<LogEvent>) => void;
  /** Stops following a session (it left this host). */
  readonly forget: (sessionId: string) => void;
}

/**
 * The session metrics as a fold of each session's log (`session-metric-fold.ts`): what the telemetry derivation's
 * spans would tell — the turn, model and tool durations and the token counts — and the admitted→claimed latency of
 * its inbox events, folded without making the spans; step/start → step/end the step durations. The logs are a live
 * runtime's own (validated as they were appended): the fold trusts them.
 */
export const createSessionMetrics = (registry: MetricsRegistry): SessionMetrics => {
  registry.histogram(SESSION_METRICS.turnDuration, HELP.turn);
  registry.histogram(SESSION_METRICS.stepDuration, HELP.step);
  registry.histogram(SESSION_METRICS.modelDuration, HELP.model);
  registry.histogram(SESSION_METRICS.toolDuration, HELP.tool);
  registry.counter(SESSION_METRICS.tokens, HELP.tokens);
  registry.histogram(SESSION_METRICS.claimLatency, HELP.claim);
  interface Followed {
    readonly fold: SessionMetricFold | null;
    stepStart: number | null;
  }
  const sessions = new Map<string, Followed>();
  const seconds = (ms: number): number => Math.max(0, ms) / 1000;
  /** False while a history is folded (its figures are not counted). */
  let recording = true;
  // each series looked up by its labels once, when it is first observed (as `observe` would create it), then kept
  const keyed = <T>(make: (key: string) => T): ((key: string) => T) => {
    const known = new Map<string, T>();
    return (key) => {
      let v = known.get(key);
      if (v === undefined) known.set(key, (v = make(key)));
      return v;
    };
  };
  let stepSeries: ((value: number) => void) | null = null;
  const turnSeries = keyed((endReason) => registry.histogramSeries(SESSION_METRICS.turnDuration, HELP.turn, { end_reason: endReason }));
  const chatSeries = keyed((model) => keyed((errorType) => registry.histogramSeries(SESSION_METRICS.modelDuration, HELP.model, { gen_ai_operation_name: 'chat', gen_ai_request_model: model, error_type: errorType })));
  const inputSeries = keyed((model) => registry.counterSeries(SESSION_METRICS.tokens, HELP.tokens, { gen_ai_token_type: 'input', gen_ai_request_model: model }));
  const outputSeries = keyed((model) => registry.counterSeries(SESSION_METRICS.tokens, HELP.tokens, { gen_ai_token_type: 'output', gen_ai_request_model: model }));
  const toolSeries = keyed((name) => keyed((errorType) => registry.histogramSeries(SESSION_METRICS.toolDuration, HELP.tool, { gen_ai_tool_name: name, error_type: errorType })));
  const claimSeries = keyed((messageClass) => registry.histogramSeries(SESSION_METRICS.claimLatency, HELP.claim, { class: messageClass }));
  const sink: SessionMetricSink = {
    turn: (endReason, d) => {
      if (recording) turnSeries(endReason)(d);
    },
    chat: (model, errorType, d, inputTokens, outputTokens) => {
      if (!recording) return;
      chatSeries(model)(errorType)(d);
      if (inputTokens !== undefined) inputSeries(model)(inputTokens);
      if (outputTokens !== undefined) outputSeries(model)(outputTokens);
    },
    tool: (name, errorType, d) => {
      if (recording) toolSeries(name)(errorType)(d);
    },
    claim: (messageClass, d) => {
      if (recording) claimSeries(messageClass)(d);
    },
  };
  const observe = (sessionId: string, event: LogEvent): void => {
    let f = sessions.get(sessionId);
    if (!f) {
      // a session first seen in the middle of its log (not followed from its history) is not folded: the fold needs seq 0
      f = { fold: event.seq === 0 ? createSessionMetricFold(sink) : null, stepStart: null };
      sessions.set(sessionId, f);
    }
    if (event.type === 'step/start') f.stepStart = event.time;
    else if (event.type === 'step/end' && f.stepStart !== null) {
      if (recording) (stepSeries ??= registry.histogramSeries(SESSION_METRICS.stepDuration, HELP.step, {}))(seconds(event.time - f.stepStart));
      f.stepStart = null;
    }
    f.fold?.push(event);
  };
  return {
    observe,
    follow: (sessionId, history) => {
      sessions.delete(sessionId);
      recording = false;
      try {
        for (const e of history) observe(sessionId, e);
      } finally {
        recording = true;
      }
    },
    forget: (sessionId) => void sessions.delete(sessionId),
  };
};
