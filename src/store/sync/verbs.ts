import { GitAppendLog } from '../git/append-log.js';
import type { ProjectContext } from '../project/context.js';
import { gitUserName } from '../project/repository.js';
import { syncRefs, type SyncMode, type SyncSummary } from './sync.js';

/**
 * The one sync verb, shared by `trellis sync` and `POST /api/sync`: joins the remote's issue, session
 * and eval logs into this repository and pushes ours (see syncRefs). The stores notice the moved refs
 * on their next read, as they notice any writer's.
 */
export function syncProject(p: ProjectContext, opts: { remote?: string; mode?: SyncMode; interactive?: boolean } = {}): Promise<SyncSummary> {
  const by = gitUserName(p.root ?? p.gitdir) ?? 'trellis';
  return syncRefs(new GitAppendLog(p.gitdir), { ...opts, by, now: p.now, cwd: p.root ?? p.gitdir });
}

/** The summary as lines a person reads. */
export function syncLines(s: SyncSummary): string {
  const n = (list: readonly string[], what: string) => (list.length ? [`${what} ${list.length}: ${list.map(short).join(' ')}`] : []);
  const lines = [
    ...n(s.adopted, 'adopted'),
    ...n(s.fastForwarded, 'fast-forwarded'),
    ...n(s.merged, 'merged'),
    ...n(s.pushed, 'pushed'),
  ];
  const head = `synced with ${s.remote}: ${s.adopted.length} adopted, ${s.fastForwarded.length} fast-forwarded, ${s.merged.length} merged, ${s.kept} kept, ${s.pushed.length} pushed`;
  return `${[head, ...lines].join('\n')}\n`;
}

const short = (ref: string) => ref.replace(/^refs\/trellis\//, '');
