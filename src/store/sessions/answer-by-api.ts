import { TrellisError } from '../../events/index.js';
import { sessionView, type SessionView } from '../../projections/index.js';
import type { Project } from '../project/project.js';
import { adapterOf } from './adapters/index.js';
import { sessionState } from './verbs.js';

/**
 * Answers a session's pending permission by the option's name through its agent's own API (opencode's
 * `POST /permission/:id/reply`): no key is typed, so no default option can turn it into another answer.
 * The session's status then follows from the agent's own events (the watcher records them).
 */
export async function answerByApi(p: Project, id: string, choice: string): Promise<{ session: SessionView; chose: string; options: readonly string[] }> {
  if (typeof choice !== 'string' || choice.trim() === '') throw new TrellisError('INVALID_INPUT', 'an answer needs a choice: an option’s text, or approve, deny');
  const state = await sessionState(p, id);
  const adapter = adapterOf(state.harness);
  if (!adapter.answer) throw new TrellisError('SESSION_REFUSED', `a ${state.harness} session is not answered through its agent's API (answer its dialog with trellis session keys)`);
  if (!state.tmux || !['starting', 'awaiting', 'running', 'review', 'merging'].includes(state.status)) {
    throw new TrellisError('SESSION_REFUSED', `the session is ${state.reason ? `${state.status}{${state.reason}}` : state.status}: it has no live agent to answer`);
  }
  const { chose, options } = await adapter.answer(state, choice);
  return { session: sessionView(await sessionState(p, id)), chose, options };
}
