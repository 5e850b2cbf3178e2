import { costChip, costWords, issueCostWords } from '../../cost-words';
import { board } from '../../store';
import type { ReviewBundle, SessionSummary, SessionView as Session } from '../../types';

/** The session page's cost card (issue 42): dollars, tokens, replies and turns, per model, and how full the context is. */
export function SessionCost({ s }: { s: Session }) {
  const w = costWords(s.usage);
  if (w === null) return null;
  if (typeof w === 'string') return <p class="card muted" data-testid="session-cost">{w}</p>;
  return (
    <section class="card session-cost" data-testid="session-cost" aria-labelledby="cost-h">
      <h2 id="cost-h">Cost so far</h2>
      <p>{w.line}</p>
      {w.models.length ? (
        <ul class="small">
          {w.models.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      ) : null}
      {w.context ? (
        <p class={w.context.warn ? 'context warn' : 'context'} data-testid="context">
          {w.context.percent !== null ? <meter min={0} max={100} low={60} high={80} optimum={0} value={w.context.percent} /> : null} {w.context.text}
          {w.context.warn ? <b> {w.context.warn}</b> : null}
        </p>
      ) : null}
    </section>
  );
}

/** A session's cost in a list row. */
export function CostChip({ s }: { s: SessionSummary }) {
  const c = costChip(s.cost);
  if (!c) return null;
  return (
    <span class={c.warn ? 'chip problem' : 'chip'} data-testid="cost-chip" title={c.warn ? 'Context near the limit' : 'What its model use cost so far'}>
      {c.text}
    </span>
  );
}

/** The issue page's cost line: the sum over the sessions that worked on the issue (from the board's session list). */
export function IssueCost({ issue }: { issue: string }) {
  const text = issueCostWords(board.value?.sessions ?? [], issue);
  return text ? (
    <p class="muted small" data-testid="issue-cost">
      {text}
    </p>
  ) : null;
}

/** The review bundle's line: what this change cost (the session's model use so far). */
export function ReviewCost({ b }: { b: ReviewBundle }) {
  const w = costWords(b.cost);
  if (w === null || typeof w === 'string') return null;
  return (
    <p class="meta" data-testid="review-cost">
      What this change cost: {w.line}
    </p>
  );
}
