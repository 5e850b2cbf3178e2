import { useState } from 'preact/hooks';
import { ApiError, enc, post } from '../../api';
import type { SessionView as Session } from '../../types';
import { ErrorBox, useAction } from '../../ui';
import { mayRunCommands } from './ShellNeeded';

/** Resume, interrupt, review, merge, close, quarantine: each a POST; a refused one shows the server's reason. */
export function Lifecycle({ s, onDone }: { s: Session; onDone: (v: Session | null) => void }) {
  const { doing: busy, error: err, run } = useAction();
  const [note, setNote] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState('');
  const [override, setOverride] = useState('');
  if (s.state === 'closed') return null;
  // Resume, interrupt, checks and merge run commands on the machine: only for a login that may (see ShellNeeded).
  const shell = mayRunCommands.value;
  const act = async (verb: string, body: object = {}) => {
    setNote('');
    await run(async () => {
      const r = await post<Session | { dispatched: true; delivered?: boolean; reason?: string } | { readings: unknown[]; checks: { line: string } }>(`api/sessions/${enc(s.id)}/${verb}`, body);
      if ('readings' in r) {
        setNote(`Checks run: ${r.readings.length} reading(s) filed. ${r.checks.line}`);
        onDone(null);
      } else if ('dispatched' in r) {
        setNote(r.delivered === false ? `Merge dispatched to the agent, but not delivered: ${r.reason ?? 'unknown reason'}` : 'Merge dispatched: the agent merges its branch; the main checkout is never touched from here.');
        onDone(null);
      } else onDone(r);
    }, verb);
  };
  // A destructive verb asks first, in the page (no browser dialog): the button turns into Yes / Cancel.
  const button = (verb: string, label: string, opts: { confirm?: string; body?: () => object } = {}) =>
    asking === verb ? (
      <span class="confirm" role="group" aria-label={`Confirm: ${label}`}>
        <span>{opts.confirm}</span>
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
        {shell ? (s.state === 'interrupted' ? button('resume', 'Resume') : button('interrupt', 'Interrupt')) : null}
        {button('review', 'Request review')}
        {shell ? button('check', 'Run checks') : null}
        {shell ? button('merge', 'Merge', { body: () => (override.trim() ? { override: override.trim() } : {}) }) : null}
        {shell ? (
          <span class="inline">
            <label>
              <span>Merge anyway, because</span>
              <input value={override} onInput={(e) => setOverride((e.target as HTMLInputElement).value)} placeholder="if checks block it" />
            </label>
          </span>
        ) : null}
        {button('close', 'Close', { confirm: `Close session ${s.id}? Its tmux session and worktree are removed; uncommitted work is saved on refs/trellis/wip/${s.id}.` })}
        <span class="inline">
          <label>
            <span>Quarantine reason</span>
            <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} placeholder="by user" />
          </label>
          {button('quarantine', 'Quarantine', { body: () => (reason.trim() ? { reason: reason.trim() } : {}) })}
        </span>
      </div>
      <ErrorBox error={err} title={err instanceof ApiError && err.status === 409 ? 'The server refused' : 'That did not work'} />
      {note ? (
        <p class="notice" role="status">
          {note}
        </p>
      ) : null}
    </div>
  );
}
