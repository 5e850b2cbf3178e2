import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, enc, post } from '../../api';
import { gateRevision } from '../../store';
import type { SessionView as Session } from '../../types';
import { ErrorBox, useAction } from '../../ui';
import { actionsFor, type Action } from './actions';
import { mayUse } from '../../host/hub';

/**
 * Resume, interrupt, review, checks, merge, close, quarantine: each a POST, shown only when the session's
 * state lets it succeed (the others say in words why they are not there); a refused one shows the
 * server's reason. Close and quarantine stop the agent, so both ask first.
 */
export function Lifecycle({ s, onDone, onChecked, merged = false }: { s: Session; onDone: (v: Session | null) => void; onChecked?: () => void; merged?: boolean }) {
  const { doing: busy, error: err, run } = useAction();
  const [note, setNote] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState('');
  const [override, setOverride] = useState('');
  // Which verb the error on show came from: the page's words for a refusal depend on it.
  const [lastVerb, setLastVerb] = useState<Action | ''>('');
  if (s.state === 'closed') return null;
  const { shown, absent, mergeByHand } = actionsFor(s, mayUse, merged);
  const act = async (verb: Action, body: object = {}) => {
    setNote('');
    setLastVerb(verb);
    await run(async () => {
      // Merging over blocking checks is a route of its own (the owner's).
      const path = verb === 'merge' && 'reason' in body ? 'merge/override' : verb;
      const r = await post<Session | { dispatched: true; delivered?: boolean; reason?: string } | { readings: unknown[]; trunk?: unknown[]; head: string }>(`api/sessions/${enc(s.id)}/${path}`, body);
      if ('readings' in r) {
        // The verdicts are the bundle's to say (one answer, never a second copy that can disagree).
        const trunk = r.trunk?.length ? ` and ${r.trunk.length} of trunk at its tip` : '';
        setNote(`Checks run at ${r.head.slice(0, 10)}: ${r.readings.length} reading(s) filed${trunk}. The verdicts are in the review bundle below.`);
        gateRevision.value++;
        onChecked?.();
        onDone(null);
      } else if ('dispatched' in r) {
        setNote(r.delivered === false ? `Merge dispatched to the agent, but not delivered: ${r.reason ?? 'unknown reason'}` : 'Merge dispatched: the agent merges its branch; the main checkout is never touched from here.');
        onDone(null);
      } else onDone(r);
    }, verb);
  };
  // A verb that stops the agent asks first, in the page (no browser dialog): the button turns into Yes / Cancel.
  // What the question asks for besides yes (quarantine's optional reason) sits inside it, not loose in the bar.
  const button = (verb: Action, label: string, opts: { confirm?: string; body?: () => object; field?: ComponentChildren } = {}) =>
    !shown.has(verb) ? null : asking === verb ? (
      <span class="confirm" role="group" aria-label={`Confirm: ${label}`}>
        <span>{opts.confirm}</span>
        {opts.field}
        <button class="button primary" onClick={() => (setAsking(''), void act(verb, opts.body?.() ?? {}))}>
          Yes, {label.toLowerCase()}
        </button>
        <button class="button" onClick={() => setAsking('')}>
          Cancel
        </button>
      </span>
    ) : (
      <button class="button" disabled={!!busy} onClick={() => (opts.confirm ? setAsking(verb) : void act(verb, opts.body?.() ?? {}))}>
        {busy === verb ? `${label}…` : label}
      </button>
    );
  return (
    <div class="lifecycle">
      <div class="actions" role="group" aria-label="Session actions">
        {button('resume', 'Resume')}
        {button('interrupt', 'Interrupt')}
        {button('review', 'Request review')}
        {button('check', 'Run checks')}
        {button('merge', 'Merge', { body: () => (override.trim() ? { reason: override.trim() } : {}) })}
        {shown.has('merge') && mayUse('POST /api/sessions/:id/merge/override') ? (
          <span class="inline">
            <label>
              <span>Merge anyway, because</span>
              <input value={override} onInput={(e) => setOverride((e.target as HTMLInputElement).value)} placeholder="if checks block it" />
            </label>
          </span>
        ) : null}
        {button('close', 'Close', { confirm: `Close session ${s.id}? Its tmux session and worktree are removed; uncommitted work is saved on refs/trellis/wip/${s.id}.` })}
        {button('quarantine', 'Quarantine', {
          confirm: `Quarantine session ${s.id}? Its agent is stopped; uncommitted work is saved on refs/trellis/wip/${s.id}; it can be resumed later.`,
          field: (
            <span class="inline">
              <label>
                <span>Reason (optional)</span>
                <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} placeholder="why it is held" />
              </label>
            </span>
          ),
          body: () => (reason.trim() ? { reason: reason.trim() } : {}),
        })}
      </div>
      {absent.length ? (
        <ul class="muted small not-offered" data-testid="not-offered">
          {absent.map((a) => (
            <li key={a}>{a}</li>
          ))}
        </ul>
      ) : null}
      {mergeByHand ? <MergeByHand branch={s.branch} id={s.id} /> : null}
      <ErrorBox error={err} action={lastVerb === 'merge' ? 'merge' : undefined} title={lastVerb && REFUSED[lastVerb] ? REFUSED[lastVerb] : err instanceof ApiError && err.status === 409 ? 'The server refused' : 'That did not work'} />
      {note ? (
        <p class="notice" role="status" data-testid="lifecycle-note">
          {note}
        </p>
      ) : null}
    </div>
  );
}

/** What did not happen, per verb, as the title of its refusal. */
const REFUSED: Partial<Record<Action, string>> = { check: 'The checks did not run', merge: 'Not merged', resume: 'Not resumed', close: 'Not closed', quarantine: 'Not quarantined' };

/** A session whose agent reads no prose cannot be asked to merge: the commands a person runs instead, to copy. */
function MergeByHand({ branch, id }: { branch: string; id: string }) {
  const commands = `git merge --no-ff ${branch}\ntrellis session close ${id}`;
  const [copied, setCopied] = useState(false);
  return (
    <div class="card merge-by-hand" data-testid="merge-by-hand">
      <p>
        This session's shell reads commands, not a request to merge, so nothing is typed into it. To merge, run these in the project's main checkout, on the trunk
        branch (after the checks in the review bundle say it is ready):
      </p>
      <pre data-testid="merge-commands">{commands}</pre>
      <button
        class="button small"
        onClick={() =>
          void navigator.clipboard?.writeText(commands).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy the commands'}
      </button>
    </div>
  );
}
