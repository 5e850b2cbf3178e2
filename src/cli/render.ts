import type { Issue, IssueEvent, IssueTimeline, Reply } from '../projections/index.js';
import type { StreamProblem } from '../store/streams/projection-cache.js';

const day = (iso: string) => iso.replace('T', ' ').slice(0, 16);

/** One line per issue: id, status, creation, concern and its nodes. */
export function issueLines(issues: readonly Issue[]): string {
  return issues.map((i) => `${i.id}  ${i.status.padEnd(6)}  ${day(i.created)}  ${i.concern}${i.nodes.length ? `  [${i.nodes.join(', ')}]` : ''}\n`).join('');
}

/** A whole thread, the way a person reads it in a terminal. */
export function issueText(i: Issue, edited?: IssueEvent): string {
  const head = [
    `${i.id}  ${i.status}  ${i.concern}`,
    `by ${i.by} · ${i.created}${edited ? ` · edited by ${edited.by} · ${edited.at}` : ''}${i.nodes.length ? ` · nodes: ${i.nodes.join(', ')}` : ''}`,
    ...(i.url ? [i.url] : []),
    ...(i.labels.length ? [`labels: ${i.labels.map((l) => l.name).join(', ')}`] : []),
    ...(i.evidence.length ? [`evidence: ${i.evidence.join(' ')}`] : []),
  ];
  const body = i.body.trim() ? `\n${i.body.trimEnd()}\n` : '';
  return `${head.join('\n')}\n${body}${i.replies.map((r, n) => replyText(r, n + 1)).join('')}`;
}

function replyText(r: Reply, n: number): string {
  const marks = [
    ...(r.resolved !== undefined ? [`remark on ${r.reading} · ${r.resolved ? 'resolved' : 'unresolved'}`] : []),
    ...(r.retracted ? ['retracted'] : []),
  ];
  return `\n── ${n} · ${r.by} · ${r.at}${marks.length ? ` · ${marks.join(' · ')}` : ''}\n${r.retracted ? '' : `${r.body.trimEnd()}\n`}`;
}

/** An issue's timeline, one change a line: when, who, what (`trellis issue timeline`). */
export function timelineLines(t: IssueTimeline): string {
  return t.events.map((e) => `${e.at}  ${e.by}  ${e.type}${e.session ? ` (session ${e.session})` : ''}\n`).join('');
}

export const problemLines = (problems: readonly StreamProblem[]): string =>
  problems.map((p) => `trellis: thread ${p.id} is unreadable (${p.ref} at ${p.commit}): ${p.reason}\n`).join('');

/** Forges that could not be pulled: one line each. */
export const noteLines = (notes: readonly string[]): string => notes.map((n) => `trellis: ${n}\n`).join('');
