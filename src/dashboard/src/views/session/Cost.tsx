import { budgetWords, costChip, costWords, dayBudgetReached, issueCostWords, spawnSpendWords, spentWords } from '../../cost-words';
import { useProjectSpend } from '../../spend';
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

/**
 * The project's spend today and this week (UTC; the week from Monday), on the board and the Sessions view:
 * what a person looking at the project sees first of its cost.
 */
export function ProjectSpendLine() {
  const s = useProjectSpend();
  if (!s) return null;
  return (
    <span class="project-spend" data-testid="project-spend" title="What the project's agent sessions' model use cost (days in UTC, the week from Monday)">
      Spent today <b data-testid="spend-today">{spentWords(s.today)}</b>
      {s.budgetUsdPerDay !== null ? <span class={dayBudgetReached(s) ? 'over' : undefined}> of the {budgetWords(s.budgetUsdPerDay)} daily budget</span> : null} · this week{' '}
      <b data-testid="spend-week">{spentWords(s.week)}</b>
    </span>
  );
}

/** The spawn form's line: what the project has spent today, against its daily budget; why a spawn will wait once it is reached. */
export function SpawnSpend() {
  const s = useProjectSpend();
  if (!s) return null;
  const w = spawnSpendWords(s);
  return (
    <div class={w.wait ? 'spawn-spend over' : 'spawn-spend'} data-testid="spawn-spend" role={w.wait ? 'status' : undefined}>
      <p>{w.text}</p>
      {w.wait ? <p data-testid="spawn-budget-wait">{w.wait}</p> : null}
    </div>
  );
}
