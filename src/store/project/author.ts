import { gitUserName } from './repository.js';

/**
 * Who a CLI write is by (README, "Usage"): the name the writer gave (`--by`), else the session the write
 * comes from (`$TRELLIS_SESSION`, set in every session's terminal), else git's `user.name` of the project
 * (else the OS user), else `unknown`. A write over HTTP has the door's rule instead (http/author.ts
 * `requestAuthor`): the gateway's stamp, else `human` for the page (spec §4.6.5).
 */
export function writeAuthor(given: { by?: string | undefined; session?: string | undefined }, cwd: string): string {
  const by = given.by?.trim();
  if (by) return by;
  const session = given.session?.trim();
  if (session) return session;
  return projectUserName(cwd) ?? 'unknown';
}

/** git's answer is kept a few seconds: a burst of page writes runs `git config` once (it blocks ~3 ms). */
const KEEP_MS = 10_000;
// Module-level on purpose: a memo of a fact on disk (the folder's git config), no guarantee rests on it.
const names = new Map<string, { name: string | null; until: number }>();

function projectUserName(cwd: string, now = Date.now()): string | null {
  const hit = names.get(cwd);
  if (hit && hit.until > now) return hit.name;
  const name = gitUserName(cwd);
  names.set(cwd, { name, until: now + KEEP_MS });
  return name;
}
