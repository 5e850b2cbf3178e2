import { DOOR_AUTHOR_HEADER, DOOR_SCOPE_HEADER } from '../http/author.js';
import type { Scope } from '../http/route-table.js';
import type { Delivery } from './wait-answers.js';

/** An answer types keys and waits for the screen to settle (a few seconds); a backend that takes longer is stuck. */
const ANSWER_MS = 20_000;

interface SessionBrief {
  readonly state: string;
  readonly reason: string | null;
  readonly detail: string | null;
}

const errorOf = async (res: Response): Promise<string> => {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  return body?.error?.message ?? `the backend answered ${res.status}`;
};

/** The agent's next state in words. */
const says = (s: SessionBrief): string =>
  s.state === 'running' ? 'the agent is working' : s.state === 'awaiting' ? `the agent now waits for ${s.reason === 'turn-end' ? 'its next prompt' : (s.reason ?? 'a person')}` : `the session is ${s.state}`;

/**
 * Answers a session's dialog on its project's backend (`base`, loopback), as the door stamps a request:
 * the author and the scope it judged; then proves it by the agent's next state. Still waiting on the same
 * dialog (same reason and detail) means the dialog did not take the answer: not taken, with why.
 */
export async function deliverAnswer(base: string | null, session: string, option: string, door: { author: string; scope: Scope }): Promise<Delivery> {
  if (!base) return { taken: false, why: "the project's backend is not running" };
  const url = (path: string) => new URL(`/api/sessions/${encodeURIComponent(session)}${path}`, base).href;
  const headers = { [DOOR_AUTHOR_HEADER]: encodeURIComponent(door.author), [DOOR_SCOPE_HEADER]: door.scope };
  try {
    const now = await fetch(url(''), { headers, signal: AbortSignal.timeout(ANSWER_MS) });
    if (!now.ok) return { taken: false, why: await errorOf(now) };
    const before = (await now.json()) as SessionBrief;
    if (before.state !== 'awaiting') return { taken: false, why: `the session is ${before.state} now: no dialog waits for an answer` };
    const res = await fetch(url('/answer'), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ choice: option }),
      signal: AbortSignal.timeout(ANSWER_MS),
    });
    if (!res.ok) return { taken: false, why: await errorOf(res) };
    const after = ((await res.json()) as { session: SessionBrief }).session;
    if (after.state === 'awaiting' && after.reason === before.reason && after.detail === before.detail && before.detail !== null)
      return { taken: false, why: `the dialog is still on screen after the answer ("${after.detail}"): its screen changed or it did not take the key` };
    return { taken: true, state: after.state, says: says(after) };
  } catch (err) {
    return { taken: false, why: `the project's backend did not answer (${(err as Error).message})` };
  }
}
