import { DOOR_AUTHOR_HEADER, DOOR_SCOPE_HEADER, DOOR_VIA_HEADER } from '../http/author.js';
import type { Scope } from '../http/route-table.js';
import { hhmm, type Delivery, type Prior, type WaitRef } from './wait-answers.js';

/** An answer types keys and waits for the screen to settle (a few seconds); a backend that takes longer is stuck. */
const ANSWER_MS = 20_000;

/** How long a read of the session's record may take. */
const READ_MS = 5_000;

interface SessionBrief {
  readonly state: string;
  readonly reason: string | null;
  readonly detail: string | null;
  /** The latest answer that took (projections/session.ts AnswerFact); absent from an older backend. */
  readonly answered?: { readonly option: string; readonly via: string; readonly at: string } | null;
}

/** The session's latest answer, when it was made since the wait began (it answered this wait), in a notification's words. */
const priorOf = (s: SessionBrief, since: string): Prior | null =>
  s.answered && Date.parse(s.answered.at) >= Date.parse(since) ? { option: s.answered.option, from: s.answered.via, at: hhmm(new Date(s.answered.at)) } : null;

const sessionUrl = (base: string, session: string, path = '') => new URL(`/api/sessions/${encodeURIComponent(session)}${path}`, base).href;

/** The answer the session records for wait `w` (made anywhere: the page, the CLI, another device), or null. */
export async function answerOnRecord(base: string | null, w: WaitRef): Promise<Prior | null> {
  if (!base) return null;
  try {
    const res = await fetch(sessionUrl(base, w.session), { signal: AbortSignal.timeout(READ_MS) });
    return res.ok ? priorOf((await res.json()) as SessionBrief, w.since) : null;
  } catch {
    return null;
  }
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
 * the author and the scope it judged, and the channel (`via`: a notification, ntfy, a webhook link); then
 * proves it by the agent's next state. A session that records an answer since the wait began was answered
 * elsewhere (the page, the CLI, another device): nothing is typed. Still waiting on the same dialog (same
 * reason and detail) means the dialog did not take the answer: not taken, with why.
 */
export async function deliverAnswer(base: string | null, w: WaitRef, option: string, door: { author: string; scope: Scope; via: string }): Promise<Delivery> {
  if (!base) return { taken: false, why: "the project's backend is not running" };
  const url = (path: string) => sessionUrl(base, w.session, path);
  const headers = { [DOOR_AUTHOR_HEADER]: encodeURIComponent(door.author), [DOOR_SCOPE_HEADER]: door.scope, [DOOR_VIA_HEADER]: door.via };
  try {
    const now = await fetch(url(''), { headers, signal: AbortSignal.timeout(ANSWER_MS) });
    if (!now.ok) return { taken: false, why: await errorOf(now) };
    const before = (await now.json()) as SessionBrief;
    const prior = priorOf(before, w.since);
    if (prior) return { taken: false, already: prior };
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
