/**
 * The signal verb: what an agent's hook (or its process exit) says, mapped by its adapter to session
 * transitions and appended. Apart from the user's verbs (verbs.ts) because its input is a program's,
 * not a person's: whatever it cannot explain is ignored and said, never a crash inside the hook.
 */
import { isTrellisError, LIVE_STATUSES, type SessionCommand, type SessionStatus } from '../../../events/index.js';
import { quarantineDue, sessionView, type SessionState, type SessionView } from '../../../projections/index.js';
import type { SessionLogProject as Project } from '../log/sessions-project.js';
// Every adapter, statically (a few kB each, in the hook's one bundle): loading only the session's own through a
// dynamic import of a chunk of its own (11cdbfb) saved no measurable CPU per event; see cli.rolldown.config.mjs.
import { adapterOf } from '../agents/index.js';
import { mapSignal } from '../agents/signal.js';
import type { BareCommand, SessionRuntime } from '../log/session-runtime.js';
// The hook's own path loads the session log and the adapters only: delivering a held prompt and keeping
// an exited agent's last screen load what they need when they happen (issue 40: the hook's CPU per event).
import { appendCommand, sessionState } from '../log/session-append.js';
import { readUsage } from '../usage/usage-verb.js';
import { budgetReached, budgetsOf, type Budgets } from '../usage/budget.js';

export interface SignalResult {
  readonly session: SessionView;
  /** Whether the signal appended anything (a repeated idle notification does not). */
  readonly changed: boolean;
  /** What was ignored and why: an unknown event, a payload that is not the hook's, a signal the state refuses. */
  readonly ignored: readonly string[];
}

/**
 * The adapters' entry point (`trellis session signal <id> <event>`, the hook's JSON on stdin): maps the
 * native event to transitions and appends them. Input the protocol does not explain (an unknown event,
 * a payload that is not the event's JSON object, a signal the current state refuses) is ignored and
 * said in `ignored`, never a crash inside the agent's hook and never a guessed state. A process exit
 * keeps the pane's last screen as evidence and its last lines in the reason. When the agent now takes
 * input, its held prompts are delivered.
 */
export async function signalSession(p: Project, rt: SessionRuntime, id: string, event: string, payload: unknown, opts: { fromPane?: string; source?: SessionCommand['source'] } = {}): Promise<SignalResult> {
  const state = await sessionState(p, id);
  // A hook of an agent Trellis already replaced (interrupted, then resumed in a new pane: the old
  // program's SessionEnd as it dies) speaks of a pane that is no longer the session's.
  const stale = stalePane(state, opts.fromPane);
  if (stale) return { session: sessionView(state), changed: false, ignored: [`${event}: ${stale}`] };
  const mapped = mapSignal(adapterOf(state.harness), event, payload, state);
  if ('ignored' in mapped) return { session: sessionView(state), changed: false, ignored: [mapped.ignored] };
  const source: SessionCommand['source'] = event === 'exit' ? 'process' : (opts.source ?? 'hook');
  const ignored: string[] = [];
  // The agent's own usage record, read up to where it now ends (issue 42), decided before the transitions
  // it signals (a turn that ends is logged with its cost known) and appended with them in one write: one
  // compare-and-swap per hook, so reading usage costs a hook little more than the read. Its `from` keeps it
  // exactly-once when another hook appended the same bytes first. Its figures outlive the agent's cleanup.
  const usage = await readUsage(state, payload, rt.env ?? process.env, event);
  if (usage.problem) ignored.push(usage.problem);
  const commands: BareCommand[] = [...usage.commands, ...mapped.commands];
  const full = (command: BareCommand): SessionCommand => ({ ...command, by: id, at: p.now().toISOString(), source: command.type === 'record-usage' ? (opts.source ?? 'hook') : source }) as SessionCommand;
  const written = await p.sessionLog.writeAll(id, commands.map(full), {
    prepare: async (at, command) => {
      // The agent's process exiting after a close or an interrupt is expected: nothing to record.
      if (command.type === 'interrupt' && !LIVE_STATUSES.has(at.status as SessionStatus)) return null;
      // Before the launch is logged the pane is unknown: an exit then is the old program's, not the new one's.
      if (command.type === 'interrupt' && opts.fromPane && at.tmux === null) return null;
      return command.type === 'interrupt' && at.tmux ? full(await exitCommand(p, rt, at, command)) : command;
    },
    skip: (err) => isTrellisError(err) && err.code === 'SESSION_REFUSED',
  });
  for (const { error } of written.skipped) ignored.push(`${event}: ${(error as Error).message}`);
  let current = written.state;
  // What the signal changed: its transitions (a usage reading alone moves no state a reaction or a held prompt waits on).
  let changed = written.events.some((e) => e.type !== 'usage');
  // Its cost, or the project's today, reached a budget (issue 42): the agent is stopped, the session waits for a person.
  let budgets: Budgets | null = null;
  try {
    budgets = usage.problem === null ? budgetsOf(p) : null;
  } catch (err) {
    // A bad budget in trellis.json is the person's to repair (every verb names it); the hook still records.
    ignored.push(`budget: ${(err as Error).message}`);
  }
  if (budgets && (budgets.budgetUsd !== null || budgets.budgetUsdPerDay !== null) && usageRecorded(state, current)) {
    const over = await budgetReached(p, current, budgets);
    if (over) {
      const { state: held, events } = await appendCommand(p, id, { type: 'await', reason: 'budget', detail: over }, id, 'supervisor');
      current = held;
      changed ||= events.length > 0;
      if (events.length > 0 && held.tmux) await rt.tmux.kill(held.tmux.session).catch(() => undefined);
      return { session: sessionView(held), changed, ignored };
    }
  }
  if (changed && current.pending.length > 0) await (await import('./prompt-verbs.js')).deliverHeld(p, rt, id);
  return { session: sessionView(changed ? await sessionState(p, id) : current), changed, ignored };
}

/** Whether this signal recorded usage (the stream moved past the read offset), so a budget is worth checking. */
function usageRecorded(before: SessionState, after: SessionState): boolean {
  return JSON.stringify(before.usageRead ?? {}) !== JSON.stringify(after.usageRead ?? {});
}

/**
 * Whether what a signal recorded calls for a reaction outside the hook that recorded it (reactions.ts:
 * `trellis session react`, run detached, or the opencode watch): it made the session's quarantine due.
 * Only a signal that changed something: a repeated one leaves the reaction to whoever ran the first.
 */
export function reactionDue(r: { readonly changed: boolean; readonly session: Pick<SessionView, 'state' | 'turnFailures'> | null }): boolean {
  return r.changed && r.session !== null && quarantineDue({ status: r.session.state, turnFailures: r.session.turnFailures }) !== null;
}

/** Why a signal from tmux pane `fromPane` is not about the session's current agent, or null. */
function stalePane(state: SessionState, fromPane: string | undefined): string | null {
  if (!fromPane || !state.tmux || state.tmux.pane === fromPane) return null;
  return `sent from pane ${fromPane}, but the session's agent runs in pane ${state.tmux.pane} (a program it replaced)`;
}

/**
 * An agent's exit as the log says it: a pane that is gone with its tmux session (killed from outside)
 * is `tmux-gone`, not a process exit; a process that exited leaves its pane, whose last screen is kept.
 */
async function exitCommand(p: Project, rt: SessionRuntime, state: SessionState, command: BareCommand & { type: 'interrupt' }): Promise<BareCommand> {
  const info = await rt.tmux.pane(state.tmux!.pane).catch(() => null);
  if (!info) return { type: 'interrupt', reason: 'tmux-gone', detail: `the tmux session ${state.tmux!.session} (pane ${state.tmux!.pane}) is gone: it was killed outside Trellis` };
  return { ...command, detail: await exitEvidence(p, rt, state) };
}

/** How many of a dead pane's last lines go into the reason. */
const EXIT_LINES = 5;

/**
 * The last screen of an agent whose process exited, kept as evidence, and its last lines for the reason
 * (`claude: not found` is seen at once). The pane stays readable after the exit (tmux `remain-on-exit`).
 */
async function exitEvidence(p: Project, rt: SessionRuntime, state: SessionState): Promise<string | undefined> {
  try {
    const { capturePane } = await import('../tmux/pane-capture.js');
    const screen = await capturePane({ socket: rt.tmux.socket, session: state.tmux!.session, pane: state.tmux!.pane }, { lines: 500 });
    const lines = screen.text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '' && !/^Pane is dead/.test(l.trim()));
    if (lines.length === 0) return undefined;
    const { hash } = await p.evidence.put(Buffer.from(`${screen.text}\n`, 'utf8'));
    return `${lines.slice(-EXIT_LINES).join('\n')}\n(last screen: evidence ${hash})`;
  } catch {
    // The pane is gone too (its tmux session was killed): nothing to keep.
    return undefined;
  }
}
