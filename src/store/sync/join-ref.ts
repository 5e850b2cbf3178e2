import { TrellisError } from '../../events/index.js';
import type { GitAppendLog } from '../git/append-log.js';
import { isAncestor } from './ancestry.js';

/** What joining a remote tip into a local ref did. */
export type JoinOutcome = 'same' | 'adopted' | 'fast-forwarded' | 'kept' | 'merged';

/** How often a join re-reads and retries when a local writer moved the ref under it. */
const MAX_ATTEMPTS = 50;

/**
 * Joins the remote's tip of one log into the local ref, under the same compare-and-swap as every append:
 * absent locally → adopt; local is an ancestor of remote → fast-forward; remote is an ancestor of local →
 * keep; diverged → a merge commit with both tips as parents (no payload; the fold reads both sides). When
 * a local writer moves the ref meanwhile, the swap fails and the join starts over from the new tip, so an
 * acknowledged append is never lost.
 */
export async function joinRef(log: GitAppendLog, ref: string, remote: string, merger: { name: string; at: () => Date; subject: string }): Promise<JoinOutcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const local = log.tip(ref);
    if (local === remote) return 'same';
    if (local === null) {
      if (await log.swap(ref, null, remote)) return 'adopted';
      continue;
    }
    if (await isAncestor(log.gitdir, local, remote)) {
      if (await log.swap(ref, local, remote)) return 'fast-forwarded';
      continue;
    }
    if (await isAncestor(log.gitdir, remote, local)) return 'kept';
    const merge = log.merge([local, remote], { name: merger.name, at: merger.at() }, merger.subject);
    if (await log.swap(ref, local, merge)) return 'merged';
  }
  throw new TrellisError('APPEND_CONFLICT', `${ref} kept moving under ${MAX_ATTEMPTS} attempts to join the remote's history; run trellis sync again`);
}
