import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, enc, post } from '../../api';
import { gateRevision } from '../../store';
import type { SessionView as Session } from '../../types';
import type { MergeByHand as MergeByHandText } from '../../../../projections/merge-by-hand.js';
import { ErrorBox, plural, useAction } from '../../ui';
import { actionsFor, type Action } from './actions';
import { mayUse } from '../../host/hub';

/**
 * Resume, interrupt, review, checks, merge, close, quarantine: each a POST, shown only when the session's
 * state lets it succeed (the others say in words why they are not there); a refused one shows the
 * server's reason. Close and quarantine stop the agent, so both ask first.
 */
export function Lifecycle({ s, onDone, onChecked, merged = false, next }: { s: Session; onDone: (v: Session | null) => void; onChecked?: () => void; merged?: boolean; next?: Action | null }) {
  const { doing: busy, error: err, run } = useAction();
  const [note, setNote] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState('');
  const [override, setOverride] = useState('');
  // Which verb the error on show came from: the page's words for a refusal depend on it.
  const [lastVerb, setLastVerb] = useState<Action | ''>('');
  if (s.state === 'closed') return null;
  const { shown, absent } = actionsFor(s, mayUse, merged);
  const act = async (verb: Action, body: object = {}) => {
    setNote('');
    setLastVerb(verb);
    await run(async () => {
      // Merging over blocking checks is a route of its own (the owner's).
      const path = verb === 'merge' && 'reason' in body ? 'merge/override' : verb;
      const r = await post<Session | { dispatched: true; delivered?: boolean; reason?: string } | { readings: unknown[]; trunk?: unknown[]; head: string }>(`api/sessions/${enc(s.id)}/${path}`, body);
      if ('readings' in r) {
        // The verdicts are the bundle's to say (one answer, never a second copy that can disagree).
        const trunk = r.trunk?.length ? `, and on trunk's latest commit` : '';
        setNote(`Checks run on the branch's latest commit (${r.head.slice(0, 10)})${trunk}: ${plural(r.readings.length, 'scenario')} measured. The verdict is above; the details are in the review bundle below.`);
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
    ) : verb === next ? (
      <span class="next-action" data-testid="next-action">
        <button class="button primary" disabled={!!busy} onClick={() => (opts.confirm ? setAsking(verb) : void act(verb, opts.body?.() ?? {}))}>
          {busy === verb ? `${label}…` : label}
        </button>
      </span>
    ) : (
      <button class="button" disabled={!!busy} onClick={() => (opts.confirm ? setAsking(verb) : void act(verb, opts.body?.() ?? {}))}>
        {busy === verb ? `${label}…` : label}
      </button>
    );
  // The strip's next step comes first, as the primary button; the rest follow in their usual order.
  const buttons: Record<Action, () => ComponentChildren> = {
    resume: () => button('resume', 'Resume'),
    interrupt: () => button('interrupt', 'Interrupt'),
    review: () => button('review', 'Request review'),
    check: () => button('check', 'Run checks'),
    merge: () => (
      <>
        {button('merge', 'Merge', { body: () => (override.trim() ? { reason: override.trim() } : {}) })}
        {shown.has('merge') && mayUse('POST /api/sessions/:id/merge/override') ? (
          <span class="inline">
            <label>
              <span>Merge anyway, because</span>
              <input value={override} onInput={(e) => setOverride((e.target as HTMLInputElement).value)} placeholder="if checks block it" />
            </label>
          </span>
        ) : null}
      </>
    ),
    close: () => button('close', 'Close', { confirm: `Close session ${s.id}? Its tmux session and worktree are removed; uncommitted work is saved on refs/trellis/wip/${s.id}.` }),
    quarantine: () =>
      button('quarantine', 'Quarantine', {
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
      }),
  };
  return (
    <div class="lifecycle">
      <div class="actions" role="group" aria-label="Session actions">
        {next && shown.has(next) ? buttons[next]() : null}
        {ORDER.filter((v) => v !== next).map((v) => (
          <Fragment key={v}>{buttons[v]()}</Fragment>
        ))}
      </div>
      {absent.length ? (
        <ul class="muted small not-offered" data-testid="not-offered">
          {absent.map((a) => (
            <li key={a}>{a}</li>
          ))}
        </ul>
      ) : null}
      <ErrorBox error={err} action={lastVerb === 'merge' ? 'merge' : undefined} title={lastVerb && REFUSED[lastVerb] ? REFUSED[lastVerb] : err instanceof ApiError && err.status === 409 ? 'The server refused' : 'That did not work'} />
      {note ? (
        <p class="notice" role="status" data-testid="lifecycle-note">
          {note}
        </p>
      ) : null}
    </div>
  );
}

/** The buttons' order in the row. */
const ORDER: readonly Action[] = ['resume', 'interrupt', 'review', 'check', 'merge', 'close', 'quarantine'];

/** What did not happen, per verb, as the title of its refusal. */
const REFUSED: Partial<Record<Action, string>> = { check: 'The checks did not run', merge: 'Not merged', resume: 'Not resumed', close: 'Not closed', quarantine: 'Not quarantined' };

/**
 * A session whose agent reads no prose cannot be asked to merge: where and what a person runs instead,
 * the review bundle's text (projections/merge-by-hand.ts, the CLI's refusal's own), copied in one click.
 * The page sees the merge by itself (the bundle is read again when trunk moves) and offers what is next.
 */
export function MergeByHand({ hand }: { hand: MergeByHandText }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <div class="merge-by-hand" data-testid="merge-by-hand">
      <p>
        A shell reads commands, not a request to merge, so you merge it: run these in a terminal. They merge the branch in the project's main checkout, <code data-testid="main-checkout">{hand.main}</code>, and open no editor; this page sees the merge by itself.
      </p>
      <pre data-testid="merge-commands">{hand.commands}</pre>
      <button
        class="button primary small"
        onClick={() =>
          void (navigator.clipboard ? navigator.clipboard.writeText(hand.commands) : Promise.reject(new Error('no clipboard'))).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy the commands'}
      </button>
      {copied === false ? <span class="muted small"> This browser did not let the page copy: select the commands above.</span> : null}
    </div>
  );
}
