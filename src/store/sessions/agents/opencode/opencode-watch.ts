import { realpathSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTrellisError } from '../../../../events/index.js';
import type { SessionState } from '../../../../projections/index.js';
import type { SessionsProject } from '../../log/sessions-project.js';
import { adapterOf } from '../index.js';
import { endpointFile, opencodeCall, readEndpoint, streamEvents, type OpencodeEndpoint } from './opencode-server.js';
import type { SessionRuntime } from '../../log/session-runtime.js';

/** Statuses in which the session's opencode should be alive and watched. */
const WATCHED = new Set(['starting', 'running', 'awaiting', 'review', 'merging']);
/** How soon a lost or not yet opened stream is tried again. */
const RETRY_MS = 150;

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

export type WatchEnd = 'gone' | 'closed' | 'replaced';

/**
 * Reads a session's opencode through its own server (DESIGN.md §9: the agent's own signals first) and
 * records what it says, as `trellis session signal` would: the adapter's events, each with its
 * `properties` as the payload. On each (re)connection it first asks opencode what holds now (pending
 * permissions and questions, busy sessions), since events sent before the stream opened are not sent
 * again. Repeated turn failures quarantine the session from here, a process the agent does not own.
 * Ends when the session's pane is gone or dead, the session stops being live (its endpoint file then
 * removed), or a relaunch gave it a new server (a resume starts a watcher of its own).
 */
export async function watchOpencode(
  p: SessionsProject,
  rt: SessionRuntime,
  id: string,
  opts: {
    resume: boolean;
    log: (event: string, ignored: readonly string[]) => void;
    /** Records one of its events as `trellis session signal` would (and reacts to it): what was ignored. */
    signal: (event: string, payload: unknown) => Promise<readonly string[]>;
  },
): Promise<WatchEnd> {
  const adapter = adapterOf('opencode');
  const first = await p.sessionLog.get(id);
  const endpoint = readEndpoint(first, rt.env);
  if (!endpoint) return 'replaced';
  let lastStatus = '';
  const forward = async (event: string, payload: unknown): Promise<void> => {
    if (!adapter.events.includes(event)) return;
    // opencode repeats `busy` at every step of a turn: one is enough.
    const status = event === 'session.status' ? JSON.stringify(payload) : '';
    if (status && status === lastStatus) return;
    lastStatus = status;
    const ignored = await opts.signal(event, payload).catch((err: unknown) => {
      if (isTrellisError(err)) return [err.message];
      throw err;
    });
    if (ignored.length) opts.log(event, ignored);
  };
  for (;;) {
    const state = await p.sessionLog.get(id);
    const end = await ended(rt, state, endpoint);
    if (end) {
      // Its opencode is gone: the password opened nothing else, and is not kept (a relaunch wrote its own).
      if (end !== 'replaced') rmSync(endpointFile(state, rt.env), { force: true });
      return end;
    }
    try {
      await streamEvents(endpoint, async (e) => {
        if (e.type === 'server.connected') {
          lastStatus = '';
          await catchUp(endpoint, await p.sessionLog.get(id), { resume: opts.resume }, forward);
          return;
        }
        await forward(e.type, e.properties);
      });
    } catch {
      // Not up yet, restarting, or gone: the loop's next check says which.
    }
    await sleep(RETRY_MS);
  }
}

/** Why the watch is over, or null while the session's opencode should still be read. */
async function ended(rt: SessionRuntime, state: SessionState, endpoint: OpencodeEndpoint): Promise<WatchEnd | null> {
  if (!WATCHED.has(state.status)) return 'closed';
  const now = readEndpoint(state, rt.env);
  if (!now || now.port !== endpoint.port || now.password !== endpoint.password) return 'replaced';
  // Until the launch is logged the pane is unknown: opencode is still coming up.
  if (!state.tmux) return null;
  const pane = await rt.tmux.pane(state.tmux.pane);
  return !pane || pane.dead ? 'gone' : null;
}

/**
 * What holds in opencode at the moment the stream opened, as the events that would have said it: a
 * pending permission or question, else a busy turn, else (on a resume, a launch with no task, or once
 * the task's conversation exists) the agent idle at its input. A fresh launch whose task opencode has
 * not yet submitted says nothing: its own events follow.
 */
async function catchUp(e: OpencodeEndpoint, state: SessionState, how: { resume: boolean }, forward: (event: string, payload: unknown) => Promise<void>): Promise<void> {
  const [statuses, permissions, questions, sessions] = await Promise.all([
    opencodeCall(e, 'GET', '/session/status'),
    opencodeCall(e, 'GET', '/permission'),
    opencodeCall(e, 'GET', '/question').catch(() => []),
    opencodeCall(e, 'GET', '/session'),
  ]);
  // opencode lists every session of the repository (keyed by its first commit, so every worktree's and
  // every earlier launch's): only a conversation in this session's worktree can be its own.
  const here = realpathOr(state.worktree);
  const roots = (Array.isArray(sessions) ? sessions.map(obj) : []).filter((s) => !s.parentID && typeof s.id === 'string' && typeof s.directory === 'string' && realpathOr(s.directory) === here);
  const own = state.agentSessionId ?? (roots[0]?.id as string | undefined);
  // Any pending permission or question on this opencode (its own conversation's, or a subagent's) waits on a person.
  const permission = (Array.isArray(permissions) ? permissions.map(obj) : [])[0];
  const question = (Array.isArray(questions) ? questions.map(obj) : [])[0];
  if (own && !state.agentSessionId) await forward('session.created', { info: roots[0] });
  if (permission) return forward('permission.asked', permission);
  if (question) return forward('question.asked', question);
  if (own && obj(obj(statuses)[own]).type === 'busy') return forward('session.status', { sessionID: own, status: { type: 'busy' } });
  if (how.resume || !state.task.trim() || own) await forward('session.idle', own ? { sessionID: own } : {});
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
