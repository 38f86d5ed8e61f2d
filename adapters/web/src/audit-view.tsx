import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ActorAction } from '../../../domain/actor-actions.js';
import type { FateEntry, MessageFate } from '../../../domain/message-fate.js';
import type { AuditInput } from '../../../host/session-audit.js';
import type { TimelineSummary } from '../../../audit/timeline-summary.js';
import { turnPage, type TurnRow } from '../../../audit/timeline-rows.js';
import { seqAtTime } from '../../../audit/timeline-measures.js';
import { consoleClient, fetchAudit } from './api.js';
import { inputInfo, type InputInfo } from './input-info.js';
import { PagedList } from './paged-list.js';
import { heldRows, pagedRows, type RowSource } from './row-pages.js';
import { fetchLongAudit, shownWhole, type ShownAudit } from './shown-audit.js';
import { ChainPanel } from './chain-panel.js';
import { CopyId } from './copy-id.js';
import { CHART_BUCKETS, TimelineChart } from './timeline-chart.js';
import { VirtualList } from './virtual-list.js';
import { StepRequest, type StepRef } from './step-request.js';

const time = (t: number) => new Date(t).toISOString().replace('T', ' ').replace('Z', ' UTC');

/** Who did it, in words: `by alice (user)`, or `no actor recorded` for an event that names none (never a guess). */
export const describeActor = (a: { readonly actor: string | null; readonly actorKind: string | null }): string =>
  a.actor === null ? 'no actor recorded' : `by ${a.actor}${a.actorKind === null ? '' : ` (${a.actorKind})`}`;

/** One fate entry in words. */
export const describeFate = (e: FateEntry): string => {
  switch (e.kind) {
    case 'admitted':
      return `admitted to ${e.target}, ${describeActor(e)}`;
    case 'edited':
      return `edited in place (${e.target}), ${describeActor(e)}`;
    case 'moved':
      return `moved to ${e.to} (a strict steer), ${describeActor(e)}`;
    case 'canceled':
      return `canceled (removed before it ran), ${describeActor(e)}`;
    case 'claimed':
      return `claimed by turn ${e.turn}`;
    case 'entered':
      return `entered turn ${e.turn ?? '?'}, step ${e.step ?? '?'} as ${e.class}`;
    case 'dropped':
      return `dropped by the pre-step of turn ${e.turn}, step ${e.step}`;
    case 'not-run':
      return `never ran: turn ${e.turn} ended ${e.reason}`;
  }
};

/** Turn rows per page of a long session's turn list. */
const TURN_PAGE = 100;

/** How many step buttons a turn row shows (a later step is reached with the Step field). */
const STEP_BUTTONS = 4;

const clock = (t: number | null): string => (t === null ? '—' : new Date(t).toISOString().slice(11, 23));

/** One input in a row: its text, class, actor, times and the id (copyable). */
const InputRow = ({ id, info, fallback }: { id: string; info: InputInfo; fallback?: { preview: string; source: string; actor: string | null } }) => {
  const i = info.get(id);
  const text = i?.text ?? fallback?.preview ?? '';
  return (
    <span class="row" data-input-row={id}>
      <ClassChip cls={i?.class ?? null} />
      <span class={`text${text === '[encrypted]' || text === '[erased]' ? ' sealed' : ''}`} data-text>
        {text || '(no text)'}
      </span>
      <span class="who">{i?.actor ?? fallback?.actor ?? 'no actor recorded'}</span>
      {i ? (
        <span class="when">
          {clock(i.admitted)} → {i.claimed !== null ? clock(i.claimed) : i.outcome}
        </span>
      ) : null}
      <CopyId id={id} label="message id" />
    </span>
  );
};

const ClassChip = ({ cls }: { cls: string | null }) => <span class={`class-label class-${cls ?? 'pending'}`}>{cls ?? 'not entered'}</span>;

const PendingList = ({ title, items, info }: { title: string; items: readonly AuditInput[]; info: InputInfo }) => (
  <section class="pending" aria-label={title}>
    <h3>
      {title} ({items.length})
    </h3>
    {items.length === 0 ? (
      <p class="empty">empty</p>
    ) : (
      <VirtualList items={items} rowHeight={30} height={160} label={title} render={(i) => <span data-pending-id={i.id}><InputRow id={i.id} info={info} fallback={i} /></span>} />
    )}
  </section>
);

const FatePanel = ({ fate }: { fate: MessageFate | null | undefined }) => {
  if (fate === undefined) return <p>Choose an input to see what happened to it.</p>;
  if (fate === null) return <p>This id does not appear in the log up to this seq.</p>;
  return (
    <div data-fate={fate.id}>
      <p>
        <code>{fate.id}</code> [{fate.source}] {fate.preview}
      </p>
      <ol class="fate">
        {fate.entries.map((e, i) => (
          <li key={i}>
            seq {e.seq} · {time(e.time)} · <strong>{describeFate(e)}</strong>
          </li>
        ))}
      </ol>
    </div>
  );
};

/** One admission or control action in words: what, on which message or turn, and by whom. */
export const describeAction = (a: ActorAction): string => {
  const what = a.id !== null ? `${a.kind} ${a.id}` : a.turn !== null ? `${a.kind} turn ${a.turn}` : a.kind;
  return `${what}, ${describeActor(a)}`;
};

/** Downloads `text` as a file named `name` (a Blob URL on a link clicked once). */
const download = (name: string, text: string): void => {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
};

/**
 * The audit view: the chain panel, the timeline chart (with queue depth and claim latency), the time-travel
 * scrubber over both pending lists and the classification, the turns with their times, each input's text, actor,
 * class and fate, and who did what. Exports the report `steerlog audit --json` prints, and prints as a report.
 */
export const AuditView = ({ sessionId }: { sessionId: string }) => {
  const [shown, setShown] = useState<ShownAudit | null>(null);
  const audit = shown?.head ?? null;
  const [summary, setSummary] = useState<TimelineSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [at, setAt] = useState<number | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [fate, setFate] = useState<MessageFate | null | undefined>(undefined);
  const [step, setStep] = useState<StepRef | null>(null);
  const [stepDraft, setStepDraft] = useState('');
  const [stepDraftError, setStepDraftError] = useState<string | null>(null);
  const [, setInfoLoaded] = useState(0);
  const stepCard = useRef<HTMLElement>(null);
  const latest = useRef(0);

  // the timeline's summary comes first (small whatever the session's length: the chart and the turn list are drawn
  // from it), the audit fold once it is in, so the fold does not hold the first picture up
  const [timelineAsk, setTimelineAsk] = useState(0);
  // the turn list's first page is asked for beside the summary (both wait for the same derivation on the server)
  const firstTurns = useRef<Promise<readonly TurnRow[]> | null>(null);
  useEffect(() => {
    let current = true;
    const first = consoleClient.fetchTurnPage(sessionId, 0, TURN_PAGE).then((p) => p.rows);
    first.catch(() => {});
    firstTurns.current = first;
    consoleClient.fetchTimelineSummary(sessionId, undefined, CHART_BUCKETS).then(
      (t) => current && setSummary(t),
      (e: unknown) => current && setNotice(`The timeline could not be read: ${e instanceof Error ? e.message : String(e)}`),
    );
    return () => {
      current = false;
    };
  }, [sessionId, timelineAsk]);
  const summaryDone = summary !== null || notice !== null;
  const long = summary?.aggregated === true;

  useEffect(() => {
    if (!summaryDone) return;
    const ticket = ++latest.current;
    const timer = setTimeout(() => {
      // a long session's fold comes without its long lists, their rows a page at a time as they come into view
      const reading = long ? fetchLongAudit(sessionId, at ?? undefined, selected ?? undefined) : fetchAudit(sessionId, at ?? undefined, selected ?? undefined).then(shownWhole);
      reading.then(
        (a) => {
          if (ticket !== latest.current) return;
          setShown(a);
          setFate(selected === null ? undefined : (a.head.message ?? null));
          setError(null);
        },
        (e: unknown) => ticket === latest.current && setError(e instanceof Error ? e.message : String(e)),
      );
    }, 60);
    return () => clearTimeout(timer);
  }, [sessionId, at, selected, summaryDone, long]);

  // the summary is asked for again when a later audit finds the log grown
  const lastSeq = audit?.lastSeq;
  const timelineSeq = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (lastSeq === undefined) return;
    if (timelineSeq.current !== undefined && timelineSeq.current !== lastSeq) setTimelineAsk((n) => n + 1);
    timelineSeq.current = lastSeq;
  }, [lastSeq]);

  // a short session's summary holds its whole timeline (its rows are at hand); a long one's rows are fetched as
  // they come into view: turn rows a page at a time, each input's admission by id
  const whole = summary?.detail ?? null;
  const info: InputInfo = useMemo(
    () =>
      inputInfo(whole?.inputs ?? [], {
        fetchIds: summary !== null && whole === null ? (ids) => consoleClient.fetchInputs(sessionId, ids) : null,
        onLoaded: () => setInfoLoaded((n) => n + 1),
      }),
    [summary],
  );
  const turnRows: RowSource<TurnRow> | null = useMemo(
    () =>
      summary === null
        ? null
        : whole !== null
          ? heldRows(turnPage(whole, 0, whole.turns.length).rows)
          : pagedRows(
              summary.totals.turns,
              (from, to) => {
                // the page asked for beside the summary, once (a failed one is asked again)
                const first = from === 0 ? firstTurns.current : null;
                firstTurns.current = null;
                return first ?? consoleClient.fetchTurnPage(sessionId, from, to).then((p) => p.rows);
              },
              { pageSize: TURN_PAGE },
            ),
    [summary],
  );
  const seekTime = (t: number) => {
    if (whole !== null) return setAt(seqAtTime(whole, t));
    consoleClient.fetchSeqAt(sessionId, t).then(
      (n) => setAt(n),
      (e: unknown) => setNotice(`The seq at that time could not be read: ${e instanceof Error ? e.message : String(e)}`),
    );
  };

  if (error) return <main class="view"><p role="alert">{error}</p></main>;
  // a long session shows its chart and turn list while the fold runs; a short one's fold is as quick as its summary
  if (!audit && !(summary?.aggregated === true)) return <main class="view"><p role="status">Folding the log…</p></main>;
  const r = audit?.report ?? null;
  const seq = audit?.at ?? -1;
  const cw = r?.consumedWork ?? null;
  const chooseStep = (ref: StepRef) => {
    setStep(ref);
    setStepDraft(`${ref.turn}.${ref.step}`);
    setStepDraftError(null);
    stepCard.current?.scrollIntoView?.({ block: 'nearest' });
  };
  const submitStep = (e: Event) => {
    e.preventDefault();
    const m = /^\s*([1-9]\d*)\.([1-9]\d*)\s*$/.exec(stepDraft);
    if (!m) return setStepDraftError('Type a step as <turn>.<step>, e.g. 2.1');
    chooseStep({ turn: Number(m[1]), step: Number(m[2]) });
  };
  const exportJson = () =>
    consoleClient.fetchExport(sessionId).then(
      (text) => download(`${sessionId}.audit.json`, text),
      (e: unknown) => setNotice(`Export failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  return (
    <main class="view audit" aria-label={`Audit of ${sessionId}`}>
      <header class="view-head">
        <div>
          <h1>
            Audit <CopyId id={sessionId} label="session id" shown={sessionId} />
          </h1>
          <p class="sub">
            {audit ? `${audit.lastSeq + 1} events · ` : ''}
            {summary ? summary.totals.turns : audit?.counts.turns} turns
            {r ? ` · ${r.ok ? 'the log folds without error' : `invalid: ${r.errors.map((e) => e.message).join('; ')}`}` : ' · folding the log…'}
            {summary?.start != null ? ` · ${new Date(summary.start).toISOString().replace('T', ' ').slice(0, 19)} – ${new Date(summary.end!).toISOString().slice(11, 19)} UTC` : ''}
          </p>
        </div>
        <div class="actions no-print">
          <button type="button" onClick={() => void exportJson()}>
            Export JSON
          </button>
          <button type="button" onClick={() => window.print()}>
            Print report
          </button>
          <a class="button-link" href={`#/live/${encodeURIComponent(sessionId)}`}>
            Open live
          </a>
        </div>
      </header>
      {notice ? <p role="alert" class="notice">{notice}</p> : null}
      {/* the chain check reads the whole log again: it waits for the timeline, so it does not slow the view's opening */}
      <ChainPanel
        sessionId={sessionId}
        ready={audit !== null || notice !== null}
        onTimelineReplaced={() => {
          // what was drawn came from the server's cache of the timeline, which the log contradicted: draw it again
          setNotice('The server’s cached timeline of this session did not match its log (an edited cache file, or one from another version): the chart and the turns were read again from the log.');
          setTimelineAsk((n) => n + 1);
        }}
      />
      {summary ? (
        <TimelineChart key="chart" summary={summary} summaryOf={(w) => consoleClient.fetchTimelineSummary(sessionId, w, CHART_BUCKETS)} at={seq} atTime={audit?.atTime ?? null} onSeek={seekTime} />
      ) : (
        <p role="status">Drawing the timeline…</p>
      )}
      {audit && r ? (
      <section key="scrubber" class="card scrubber" aria-label="Time travel">
        <h2>
          State at seq {seq}
          {audit.atTime !== null ? <span class="sub"> · {time(audit.atTime)}</span> : null}
        </h2>
        <div class="scrub-controls no-print">
          <label for="seq-range">Seq</label>
          <input id="seq-range" type="range" min={-1} max={audit.lastSeq} value={seq} onInput={(e) => setAt(Number((e.currentTarget as HTMLInputElement).value))} />
          <label for="seq-number">Go to seq</label>
          <input id="seq-number" type="number" min={-1} max={audit.lastSeq} value={seq} onChange={(e) => setAt(Number((e.currentTarget as HTMLInputElement).value))} />
          <button type="button" onClick={() => setAt(Math.max(-1, seq - 1))} aria-label="Previous seq">
            ◀
          </button>
          <button type="button" onClick={() => setAt(Math.min(audit.lastSeq, seq + 1))} aria-label="Next seq">
            ▶
          </button>
        </div>
        <div class="pending-lists" data-at={seq}>
          <PendingList title="next-turn" items={audit.pending.nextTurn} info={info} />
          <PendingList title="next-step" items={audit.pending.nextStep} info={info} />
        </div>
        <section aria-label="Classification">
          <h3>Classification ({shown!.messages.total} messages entered)</h3>
          <PagedList
            rows={shown!.messages}
            rowHeight={30}
            height={200}
            label="Classified messages"
            render={(m, i) => m === undefined ? <span class="row loading">message {i + 1}…</span> : (
              <span data-class-id={m.id} class="row">
                <span class="seq">seq {m.seq}</span> <strong>{m.class}</strong> <span class="text">{info.get(m.id)?.text ?? ''}</span>
                <span class="who">{info.get(m.id)?.actor ?? 'no actor recorded'}</span> <CopyId id={m.id} label="message id" />
              </span>
            )}
          />
        </section>
      </section>
      ) : (
        <p key="scrubber-wait" role="status" class="card">Folding the log for the state at each seq…</p>
      )}
      {/* keyed: the sections that appear when the fold arrives must not take over the turn list's element (its scroll) */}
      <section key="turns" class="card" aria-label="Turns">
        <h2>Turns ({turnRows?.total ?? audit?.counts.turns})</h2>
        {cw ? (
          <p key="consumed" data-consumed-work>
            Consumed work at seq {seq}: {cw.endSeq === null ? 'no turn closed yet' : `last turn ${cw.endTurn} closed at seq ${cw.endSeq}`}
            {cw.droppedUnrun ? ' · some input was dropped unrun' : ' · nothing dropped unrun'}
          </p>
        ) : null}
        {turnRows ? (
        <PagedList
          key="turn-list"
          rows={turnRows}
          rowHeight={30}
          height={240}
          label="Turn timeline"
          render={(t, i) => {
            if (t === undefined) return <span class="row loading">turn {i + 1}…</span>;
            return (
              <span data-turn={t.turn} class="row">
                <strong>turn {t.turn}</strong>
                <span class="when" data-turn-time>
                  {`${clock(t.start)} → ${t.end !== null ? `${clock(t.end)} (${t.end - t.start} ms)` : 'open'}`}
                </span>
                <span class="seq">
                  seq {t.startSeq}–{t.endSeq ?? 'open'}
                </span>
                <span>
                  {t.steps} step{t.steps === 1 ? '' : 's'} · ended {t.reason ?? '(open)'}
                </span>
                <span class="step-picks no-print">
                  {Array.from({ length: Math.min(t.steps, STEP_BUTTONS) }, (_, k) => (
                    <button
                      type="button"
                      class="pick"
                      key={k}
                      data-step-pick={`${t.turn}.${k + 1}`}
                      aria-pressed={step?.turn === t.turn && step.step === k + 1}
                      aria-label={`Request of step ${t.turn}.${k + 1}`}
                      onClick={() => chooseStep({ turn: t.turn, step: k + 1 })}
                    >
                      {t.turn}.{k + 1}
                    </button>
                  ))}
                </span>
                <span class="text">claimed {t.claimed.map((c) => `“${c.text || c.id}”`).join(', ') || 'nothing'}</span>
              </span>
            );
          }}
        />
        ) : null}
      </section>
      <section key="step" class="card step-request" aria-label="Step request" ref={stepCard}>
        <div class="card-head">
          <h2>{step === null ? 'Step request' : `Request of turn ${step.turn}, step ${step.step}`}</h2>
          <form class="step-form no-print" onSubmit={submitStep}>
            <label for="step-ref">Step</label>
            <input id="step-ref" type="text" inputMode="decimal" placeholder="turn.step" size={8} value={stepDraft} onInput={(e) => setStepDraft((e.currentTarget as HTMLInputElement).value)} aria-describedby={stepDraftError ? 'step-ref-error' : undefined} />
            <button type="submit">Show request</button>
          </form>
        </div>
        {stepDraftError ? (
          <p id="step-ref-error" role="alert" class="notice">
            {stepDraftError}
          </p>
        ) : null}
        <StepRequest sessionId={sessionId} step={step} textOf={(id) => info.get(id)?.text} onSeek={(n) => setAt(n)} />
      </section>
      {audit ? (
      <Fragment key="inputs-actions">
      <section class="card inputs" aria-label="Inputs">
        <h2>What happened to this input?</h2>
        <div class="inputs-grid">
          <PagedList
            rows={shown!.inputs}
            rowHeight={34}
            height={280}
            label="Inputs"
            render={(i, k) => i === undefined ? <span class="row loading">input {k + 1}…</span> : (
              <span class={`row input-pick${i.id === selected ? ' selected' : ''}`}>
                <button type="button" class="pick" aria-pressed={i.id === selected} onClick={() => setSelected(i.id)} aria-label={`${i.last ?? 'mentioned'}: what happened to ${i.id}${i.actor !== null ? ` · ${i.actor}` : ''}`}>
                  {i.last ?? 'mentioned'}
                </button>
                <InputRow id={i.id} info={info} fallback={i} />
              </span>
            )}
          />
          <div class="fate-panel" aria-live="polite">
            <FatePanel fate={fate} />
          </div>
        </div>
      </section>
      <section class="card" aria-label="Actions">
        <h2>Who did what ({shown!.actions.total})</h2>
        <PagedList
          rows={shown!.actions}
          rowHeight={26}
          height={200}
          label="Admissions and control actions"
          render={(a, k) => a === undefined ? <span class="loading">action {k + 1}…</span> : (
            <span data-action-seq={a.seq} data-actor={a.actor ?? ''}>
              seq {a.seq} · {time(a.time)} · {describeAction(a)}
            </span>
          )}
        />
      </section>
      </Fragment>
      ) : null}
    </main>
  );
};
