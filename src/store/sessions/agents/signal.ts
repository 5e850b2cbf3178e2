import type { SessionState } from '../../../projections/index.js';
import type { HarnessAdapter, SignalCommand } from './adapter.js';

/** Signals every adapter understands, whatever the harness (pane-pattern scripts, tmux's own pane-died hook). */
export const GENERIC: Readonly<Record<string, readonly SignalCommand[]>> = {
  'turn-end': [{ type: 'await', reason: 'turn-end' }],
  idle: [{ type: 'idle' }],
  permission: [{ type: 'await', reason: 'permission' }],
  question: [{ type: 'await', reason: 'question' }],
  busy: [{ type: 'busy' }],
  exit: [{ type: 'interrupt', reason: 'process-exit' }],
  'turn-failed': [{ type: 'turn-fail', reason: 'the agent reported a failed turn' }],
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What one native signal means for a session: its commands, in order, or why it is ignored. Input the
 * protocol does not explain (an unknown event, a native event without its JSON object, a payload that
 * names another event) is ignored, never guessed at.
 */
export function mapSignal(adapter: HarnessAdapter, event: string, payload: unknown, state: SessionState): { commands: readonly SignalCommand[] } | { ignored: string } {
  const native = adapter.events.includes(event);
  if (!native && GENERIC[event] === undefined) {
    return { ignored: `unknown signal '${event}' for a ${adapter.name} session (known: ${[...adapter.events, ...Object.keys(GENERIC)].join(', ')})` };
  }
  if (!native) return { commands: GENERIC[event]! };
  if (!isObject(payload)) return { ignored: `a ${event} signal needs the hook's JSON object on stdin` };
  if (payload.hook_event_name !== undefined && payload.hook_event_name !== event) return { ignored: `a ${event} signal carried a ${JSON.stringify(payload.hook_event_name)} payload` };
  return { commands: adapter.signal(event, payload, state) };
}

/**
 * A SessionStart hook, whose shape Claude Code and Gemini CLI share: the agent's own session id is
 * recorded; after a resume or /clear (and a launch with no task) the agent waits at its input with nothing
 * to do.
 */
export function sessionStartCommands(payload: unknown, state: SessionState): readonly SignalCommand[] {
  const text = (name: string) => (isObject(payload) && typeof payload[name] === 'string' ? (payload[name] as string) : undefined);
  const id = text('session_id');
  const source = text('source');
  const identify: SignalCommand[] = id ? [{ type: 'identify', agentSessionId: id }] : [];
  const idle = source === 'resume' || source === 'clear' || (source === 'startup' && !state.task.trim());
  return idle ? [...identify, { type: 'idle' }] : identify;
}
