import { useEffect, useRef, useState } from 'preact/hooks';
import { route } from '../../router';
import { ApiError, enc, post } from '../../api';
import type { SessionView as Session } from '../../types';
import { ErrorBox, useAction } from '../../ui';
import { mayUse } from '../../host/hub';

/** Waits a person answers in the agent's own dialog. */
const DIALOGS = new Set(['permission', 'question', 'setup', 'dialog']);

/**
 * Answers the agent's dialog by what its options say (the server reads the screen, moves the selection
 * onto the option named and checks it before confirming), so a dialog whose default changed is still
 * answered as meant: approve or deny a permission, trust a folder, or an option's text for a question.
 */
export function Answer({ s, onDone }: { s: Session; onDone: () => void }) {
  const { doing, error, run } = useAction();
  const [text, setText] = useState('');
  const [note, setNote] = useState('');
  const box = useRef<HTMLInputElement>(null);
  // What the login may do arrives after the page's first render: the box appears only once it is known.
  const may = mayUse('POST /api/sessions/:id/answer');
  const shown = s.state === 'awaiting' && DIALOGS.has(s.reason ?? '') && may;
  // Opened from a notification of a question without fixed options (`?answer=1`): the answer box has the
  // keyboard, once it is there (focused when it appears, not at the first render, when it may not be yet).
  useEffect(() => {
    if (shown && route.value.query.has('answer')) box.current?.focus();
  }, [shown, s.id]);
  if (!shown) return null;
  const answer = (choice: string) =>
    run(async () => {
      setNote('');
      const r = await post<{ chose: string }>(`api/sessions/${enc(s.id)}/answer`, { choice });
      setNote(`Answered: ${r.chose}`);
      onDone();
    }, choice);
  const button = (choice: string, label: string) => (
    <button class="button" disabled={!!doing} onClick={() => void answer(choice)}>
      {doing === choice ? `${label}…` : label}
    </button>
  );
  const trust = s.reason === 'setup' && /trust/i.test(s.detail ?? '');
  return (
    <div class="card answer" data-testid="answer">
      <div class="actions" role="group" aria-label="Answer the agent">
        {s.reason === 'permission' ? (
          <>
            {button('approve', 'Approve')}
            {button('deny', 'Deny')}
          </>
        ) : null}
        {trust ? button('trust', 'Trust this folder') : null}
        <span class="inline">
          <label>
            <span>Choose the option</span>
            <input ref={box} data-testid="answer-text" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} placeholder="as it reads on screen" />
          </label>
          <button class="button" disabled={!!doing || !text.trim()} onClick={() => void answer(text.trim())}>
            Choose
          </button>
        </span>
      </div>
      <ErrorBox error={error} title={error instanceof ApiError && error.status === 409 ? 'The agent could not be answered' : 'That did not work'} />
      {note ? (
        <p class="notice" role="status">
          {note}
        </p>
      ) : null}
    </div>
  );
}
