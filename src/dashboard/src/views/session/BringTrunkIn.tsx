import { useState } from 'preact/hooks';
import { enc, post } from '../../api';
import type { BringTrunkIn as Next, PromptResult } from '../../types';
import { ErrorBox, useAction } from '../../ui';
import { mayRunCommands, ShellNeeded } from './ShellNeeded';
import { TAKES_NO_PROMPT } from './actions';

/**
 * A conflict's one next action, as the review bundle names it: an agent is asked to bring trunk in (a
 * prompt, sent from here), a shell is given the exact command for its terminal. Offered only where it can
 * succeed: a session no prompt reaches says so, and a login that may not run commands is told why.
 */
export function BringTrunkIn({ session, state, trunk, next }: { session: string; state: string; trunk: string; next: Next }) {
  const { busy, error, run } = useAction();
  const [note, setNote] = useState('');
  if ('command' in next) {
    return (
      <p class="notice bring-trunk-in" data-testid="bring-trunk-in">
        To clear the conflict, bring <code>{trunk}</code> in: in the session's terminal, run <code class="command">{next.command}</code>, resolve the conflicting files, then commit them (<code>git commit -am 'Bring {trunk} in'</code>) and run the checks again.
      </p>
    );
  }
  if (TAKES_NO_PROMPT.has(state)) {
    return (
      <p class="notice muted bring-trunk-in" data-testid="bring-trunk-in">
        To clear the conflict, <code>{trunk}</code> has to be brought into the branch; a {state} session takes no prompt{state === 'quarantined' ? ': resume it first' : ''}.
      </p>
    );
  }
  if (!mayRunCommands.value) return <ShellNeeded what={`Asking the agent to bring ${trunk} in`} />;
  const ask = () =>
    run(async () => {
      const r = await post<PromptResult>(`api/sessions/${enc(session)}/prompt`, { body: next.prompt });
      setNote(r.delivered ? 'Asked: the prompt was typed into the agent’s pane.' : `Asked: the prompt is queued on the timeline, typed when the agent next waits (${r.reason ?? 'it is busy'}).`);
    });
  return (
    <div class="notice bring-trunk-in" data-testid="bring-trunk-in">
      <p>
        To clear the conflict, <code>{trunk}</code> has to be brought into the branch. <button class="button small" onClick={() => void ask()} disabled={busy || !!note}>
          {busy ? 'Asking…' : 'Ask the agent to bring trunk in'}
        </button>
      </p>
      <details>
        <summary class="muted small">The prompt it sends</summary>
        <pre>{next.prompt}</pre>
      </details>
      {note ? (
        <p role="status" data-testid="bring-trunk-in-result">
          {note}
        </p>
      ) : null}
      <ErrorBox error={error} action="prompt" title="Not asked" />
    </div>
  );
}
