import type { ReviewBundle, SessionView as Session } from '../../types';
import { mergeVerdict } from '../SessionChecks';
import { SessionState } from '../Sessions';
import { Answer } from './Answer';
import { BringTrunkIn } from './BringTrunkIn';
import { FixedIssue } from './FixedIssue';
import { Lifecycle, MergeByHand } from './Lifecycle';
import { actionsFor, nextStep, type NextStep } from './actions';
import { mayUse } from '../../host/hub';

/** The checks' verdict in one line, from the review bundle (the same words as its checks panel). */
function verdict(b: ReviewBundle | undefined, loading: boolean): string {
  if (!b) return loading ? 'Reading the checks…' : 'Checks: not read on this page yet (running them, or loading the review bundle below, shows their verdict).';
  if (b.preflight.merged) return `Merged into ${b.preflight.trunk} at ${b.preflight.merged.commit.slice(0, 10)}.`;
  return mergeVerdict(b.checks, b.preflight).text;
}

/**
 * The top of the session page: what the session is (its state and who caused it), what the checks say,
 * and the one next step that can succeed now, picked by nextStep from what the page offers; the other
 * actions follow it, smaller. Everything a person decides on sits here, above the terminal.
 */
export function DecisionStrip({ s, bundle, loading, merged, onDone, onChecked }: { s: Session; bundle: ReviewBundle | undefined; loading: boolean; merged: boolean; onDone: (v: Session | null) => void; onChecked: () => void }) {
  const offered = actionsFor(s, mayUse, merged);
  const facts = bundle ? { merged: !!bundle.preflight.merged, ready: bundle.preflight.ready, conflicts: !!bundle.preflight.bringTrunkIn, byHand: !!bundle.preflight.mergeByHand } : null;
  const step: NextStep = nextStep(s, offered, facts, mayUse('POST /api/sessions/:id/answer'));
  const pre = bundle?.preflight;
  return (
    <section class="card decision" data-testid="decision" aria-label="What to do next">
      <p class="decision-state">
        <SessionState s={s} />
      </p>
      <p class={`verdict ${bundle ? (pre?.merged || (pre?.ready && !pre.conflicts.length) ? 'good' : 'bad') : 'muted'}`} data-testid="verdict">
        {verdict(bundle, loading)}
      </p>
      {step.kind === 'answer' ? (
        <div data-testid="next-action">
          <Answer s={s} onDone={() => onDone(null)} />
        </div>
      ) : step.kind === 'bring-trunk-in' && pre?.bringTrunkIn ? (
        <div data-testid="next-action">
          <BringTrunkIn session={s.id} state={s.state} trunk={pre.trunk} next={pre.bringTrunkIn} />
        </div>
      ) : step.kind === 'merge-by-hand' && pre?.mergeByHand ? (
        <div data-testid="next-action">
          <MergeByHand hand={pre.mergeByHand} />
        </div>
      ) : step.kind === 'close-issue' && s.issue ? (
        <div data-testid="next-action">
          <FixedIssue issue={s.issue} session={s.id} />
        </div>
      ) : step.kind === 'wait' && step.why ? (
        <p class="muted" data-testid="next-action">
          {step.why}
        </p>
      ) : null}
      <Lifecycle s={s} onDone={onDone} onChecked={onChecked} merged={merged} next={step.kind === 'verb' ? step.verb : null} />
    </section>
  );
}
