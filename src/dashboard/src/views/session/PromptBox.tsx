import { useState } from 'preact/hooks';
import { ApiError, enc, post } from '../../api';
import { size, wordsFor } from '../../error-words';
import { shellWord, uploadFile } from '../../uploads';
import type { PromptResult, SessionView as Session } from '../../types';
import { ErrorBox, useAction } from '../../ui';

/**
 * The prompt box: the whole prompt goes on the timeline first, then into the pane (200), or not (202, with why).
 * Shown only for a session a prompt reaches (the session page says so in its Prompts card otherwise).
 */
export function PromptBox({ s, onDone }: { s: Session; onDone: (v: Session) => void }) {
  const [body, setBody] = useState('');
  const { busy, doing, error: err, run } = useAction();
  const [note, setNote] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setNote('');
    await run(async () => {
      const r = await post<PromptResult & { session: Session }>(`api/sessions/${enc(s.id)}/prompt`, { body });
      setNote(r.delivered ? (r.waited ? 'Delivered to the pane once its input box was empty: it first held text someone was typing.' : 'Delivered to the pane.') : `Queued on the timeline, not typed into the pane: ${r.reason ?? 'unknown reason'}.`);
      setBody('');
      onDone(r.session);
    });
  };
  // A text too long for one prompt goes to the agent's machine as a file (the page's uploads), and the
  // prompt names the file: one click, nothing retyped.
  const attach = async () => {
    setNote('');
    await run(async () => {
      const up = await uploadFile(new File([body], 'pasted-text.txt', { type: 'text/plain' }));
      const r = await post<PromptResult & { session: Session }>(`api/sessions/${enc(s.id)}/prompt`, {
        body: `The text I pasted is in the file ${shellWord(up.path)} (${size(up.size)}, too long for a prompt): read it there.`,
      });
      setNote(`Attached as ${up.path} (${size(up.size)}); ${r.delivered ? 'the prompt naming it was delivered to the pane.' : `the prompt naming it is queued: ${r.reason ?? 'unknown reason'}.`}`);
      setBody('');
      onDone(r.session);
    }, 'attach');
  };
  return (
    <form class="card prompt-box" onSubmit={submit} aria-labelledby="prompt-h">
      <h2 id="prompt-h">Send a prompt</h2>
      <label>
        <span>Prompt text</span>
        <textarea
          rows={4}
          value={body}
          onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && (e.currentTarget as HTMLTextAreaElement).form?.requestSubmit()}
        />
      </label>
      <p class="muted small">
        Sent whole (a bracketed paste, then Enter) and kept on the session's timeline; typed only when the agent waits for a prompt, else queued and delivered when it
        next does (answer a dialog with raw keys). Ctrl+Enter sends.
      </p>
      <ErrorBox error={err} action="prompt" title={err instanceof ApiError && err.status === 502 ? 'The prompt was refused' : 'Not sent'}>
        {wordsFor(err, 'prompt').attach && body ? (
          <button class="button small" type="button" onClick={() => void attach()} disabled={busy}>
            {doing === 'attach' ? 'Attaching…' : `Attach it as a file (${size(new Blob([body]).size)})`}
          </button>
        ) : null}
      </ErrorBox>
      {note ? (
        <p class="notice" role="status" data-testid="prompt-result">
          {note}
        </p>
      ) : null}
      <div>
        <button class="button primary" type="submit" disabled={busy || !body}>
          {busy ? 'Sending…' : 'Send prompt'}
        </button>
      </div>
    </form>
  );
}
