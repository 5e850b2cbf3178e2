/**
 * How a session reads on a terminal (`session ls`, `show`, a transition's answer, `review`): pure
 * renderings of the views the session verbs return, kept apart from the commands that print them.
 */
import { agentUsdText, usdText, type OverlapWith, type SessionView, type UsageView } from '../projections/index.js';
import { confinementWords } from '../projections/inbox.js';
import type { ReviewBundle } from '../store/sessions/checks/review.js';
import type { ListedSession } from '../store/sessions/verbs/list-sessions.js';
import { checksText } from './checks-text.js';

/** A status as the CLI writes it: `interrupted{tmux-gone}`, or the bare state when there is no reason. */
export const statusLabel = (s: { state: string; reason: string | null }) => (s.reason ? `${s.state}{${s.reason}}` : s.state);

/**
 * A transition's answer: what was done, then the state only where the deed's words do not already say it
 * (`<id> closed`, not `closed: closed`; `<id> quarantined (its reason)`; `<id> resumed: running`). `lands`
 * is the state the deed names.
 */
export const transitionLine = (s: SessionView, done: string, lands?: string): string =>
  s.state === lands ? `${s.id} ${done}${s.reason ? ` (${s.reason})` : ''}` : `${s.id} ${done}: ${statusLabel(s)}`;

/** One session of `trellis session ls`: id, status, harness, unread mark, title, nodes and overlaps. */
export function sessionLine(s: ListedSession): string {
  const overlap = s.overlaps.map((o) => `  overlaps ${o.session} on ${[...o.nodes.map((n) => `node ${n}`), ...o.paths].join(', ')}`).join('');
  const unconfined = s.confinement && !s.confinement.confined ? '  (unconfined)' : '';
  return `${s.id}  ${statusLabel(s).padEnd(22)}  ${s.harness.padEnd(6)}  ${s.unread ? '*' : ' '} ${s.title}${s.nodes.length ? `  [${s.nodes.join(', ')}]` : ''}${unconfined}${overlap}\n`;
}

/** `trellis session show`: the session whole, its prompts in order. */
/** Which way a session's states come (issue 41), in words. */
const CHANNEL_WORDS: Readonly<Record<NonNullable<SessionView['channel']>, string>> = { protocol: "the agent's own protocol (Codex's app-server)", notify: "Codex's notify program and its pane", hook: "the agent's hooks" };

export function sessionText(s: SessionView & { overlaps?: readonly OverlapWith[]; screenWatcher?: number | null }): string {
  const lines = [
    `${s.id}  ${statusLabel(s)} (${s.source})${s.unread ? '  unread' : ''}`,
    ...(s.detail ? [s.detail] : []),
    `${s.harness}${s.agentVersion ? ` ${s.agentVersion}` : ''} · by ${s.by} · ${s.created} · branch ${s.branch} · base ${s.base.slice(0, 12)}`,
    `worktree ${s.worktree}${s.tmux ? ` · tmux ${s.tmux.session} ${s.tmux.pane}` : ''}${s.agentSessionId ? ` · agent session ${s.agentSessionId}` : ''}`,
    ...(s.confinement ? [confinementWords(s.confinement)] : []),
    ...(s.screenWatcher ? [`screen read by its own watcher (pid ${s.screenWatcher})`] : []),
    ...(s.channel ? [`states from ${CHANNEL_WORDS[s.channel]}`] : []),
    ...(s.nodes.length ? [`nodes: ${s.nodes.join(', ')}`] : []),
    ...(s.issue ? [`issue: ${s.issue}`] : []),
    ...(s.overlaps ?? []).map((o) => `overlaps session ${o.session}: ${[...o.nodes.map((n) => `node ${n}`), ...o.paths].join(', ')}`),
    ...usageLines(s.usage),
    ...(s.wip ? [`uncommitted work saved: refs/trellis/wip/${s.id} (${s.wip.slice(0, 12)})`] : []),
    '',
    s.task,
    ...s.timeline.map((t, i) => `\n── prompt ${i + 1} · ${t.by} · ${t.at}${t.held ? ` · queued: ${t.held}` : ''}\n${t.body}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** A session's usage as `session show` says it: cost and tokens, per model when several, turns, context in use. */
export function usageLines(u: UsageView | undefined): string[] {
  if (!u) return [];
  if ('none' in u) return [`cost: none (${u.none})`];
  if (u.total.responses === 0) return ['cost: nothing recorded yet (read from the agent’s own records as its hooks fire)'];
  const t = (x: typeof u.total) => `${x.input + x.output + x.cacheRead + x.cacheWrite} tokens (in ${x.input}, out ${x.output}, cache read ${x.cacheRead}, cache write ${x.cacheWrite})`;
  const models = Object.entries(u.byModel);
  const c = u.context;
  return [
    `cost: ${usdText(u.total)}${agentUsdText(u.total) ? ` (${agentUsdText(u.total)})` : ''} · ${t(u.total)} · ${u.total.responses} response(s) · ${u.turns} turn(s)`,
    ...(models.length > 1 ? models.map(([m, x]) => `  ${m}: ${usdText(x)} · ${t(x)}`) : [`  model ${models[0]![0]}`]),
    ...(c ? [`context: ${c.used} of ${c.window ?? 'an unknown window'}${c.percent !== null ? ` (${c.percent}%)` : ''}${c.nearLimit ? ' — near the limit: the agent will compact or fail soon' : ''}`] : []),
  ];
}

/** `trellis review`: preflight, checks, commits, files and the diff. */
export function reviewText(r: ReviewBundle): string {
  const pre = r.preflight;
  return [
    `${r.session}  ${r.branch}  ${r.base.slice(0, 12)}..${r.head.slice(0, 12)}`,
    pre.merged
      ? `merged into ${pre.trunk} at ${pre.merged.commit.slice(0, 12)}`
      : `merge into ${pre.trunk}: ${pre.result === 'clean' ? 'clean' : `conflicts in ${pre.conflicts.join(', ')}`}${pre.trunkMovedAhead ? ` (${pre.trunk} has commits the branch lacks)` : ''}`,
    ...(pre.bringTrunkIn && !pre.merged ? ['prompt' in pre.bringTrunkIn ? `next: ask the agent to bring ${pre.trunk} in (trellis session prompt ${r.session} --body <this>): ${pre.bringTrunkIn.prompt}` : `next: in the session's terminal, run ${pre.bringTrunkIn.command}`] : []),
    ...(pre.mergeByHand && !pre.bringTrunkIn ? [`merge by hand, in the main checkout ${pre.mergeByHand.main} (its agent reads no prose):`, pre.mergeByHand.commands] : []),
    ...usageLines(r.cost).map((l) => (l.startsWith('cost: ') ? `what this change cost: ${l.slice(6)}` : l)),
    '',
    checksText(r.checks),
    ...r.commits.map((c) => `${c.hash.slice(0, 12)} ${c.subject} (${c.author})`),
    '',
    ...r.files.map((f) => `${f.status} ${f.path}`),
    ...(r.nodes.length ? ['', ...r.nodes.map((n) => `node ${n.id}: ${n.openIssues.length} open ${n.openIssues.length === 1 ? 'issue' : 'issues'}${n.openIssues.map((i) => `\n  ${i.id} ${i.concern}`).join('')}`)] : []),
    '',
    ...r.files.map((f) => f.diff),
  ].join('\n');
}
