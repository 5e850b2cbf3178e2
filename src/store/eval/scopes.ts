import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import type { ScopeDeclarations, ScopeInfo } from '../../projections/index.js';
import { requireRoot } from '../project/repository.js';
import { readTip } from '../git/refs.js';
import type { ProjectContext } from '../project/context.js';
import { readSpecTree, type SpecTree } from '../spec/spec-tree.js';
import { hasLinkedWorktrees, listWorktrees } from '../spec/worktrees.js';

export const TRUNK = 'trunk';

/** Sessions run in linked worktrees on branch `trellis/<session-id>`; their scope is the session id. */
const SESSION_BRANCH = 'trellis/';

/**
 * The live scopes, trunk (the main checkout) first, then every linked worktree that is still on disk and
 * on a branch: named by its session id (branch `trellis/<id>`) or its branch name. Without linked
 * worktrees nothing is spawned.
 */
export async function liveScopes(p: ProjectContext): Promise<ScopeInfo[]> {
  const root = requireRoot(p);
  if (!hasLinkedWorktrees(p.gitdir)) return [{ name: TRUNK, worktree: root, ...mainHead(p.gitdir) }];
  const worktrees = await listWorktrees(root, p.gitdir);
  const scopes: ScopeInfo[] = [];
  for (const w of worktrees) {
    if (w.main) {
      scopes.push({ name: TRUNK, worktree: w.path, branch: w.branch, head: w.head });
      continue;
    }
    // A worktree whose folder was deleted (git lists it as prunable) is gone as a scope.
    if (!w.branch || !existsSync(w.path)) continue;
    const name = w.branch.startsWith(SESSION_BRANCH) ? w.branch.slice(SESSION_BRANCH.length) : w.branch;
    if (name === TRUNK || scopes.some((s) => s.name === name)) continue;
    scopes.push({ name, worktree: w.path, branch: w.branch, head: w.head });
  }
  return scopes;
}

/** The main checkout's branch and HEAD commit, read from the git dir without spawning git. */
function mainHead(gitdir: string): { branch: string | null; head: string | null } {
  let text: string;
  try {
    text = readFileSync(join(gitdir, 'HEAD'), 'utf8').trim();
  } catch {
    return { branch: null, head: null };
  }
  const m = /^ref: (refs\/heads\/(.+))$/.exec(text);
  if (!m) return { branch: null, head: /^[0-9a-f]{40,64}$/.test(text) ? text : null };
  return { branch: m[2]!, head: readTip(gitdir, m[1]!) };
}

/** What a requested scope resolved to: the scope itself, or trunk with the reason it fell back. */
export type ResolvedScope =
  | { readonly scope: ScopeInfo; readonly fallback?: undefined }
  | { readonly scope: ScopeInfo; readonly fallback: 'trunk'; readonly requested: string; readonly reason: string };

/**
 * Resolves a scope name among the live scopes: `trunk`, or a linked worktree whose branch is the name or
 * `trellis/<name>`. A name that matches nothing (its worktree was removed, or never existed) falls back
 * to trunk, saying so.
 */
export function resolveScope(scopes: readonly ScopeInfo[], requested: string | undefined): ResolvedScope {
  const trunk = scopes[0]!;
  if (requested === undefined || requested === TRUNK) return { scope: trunk };
  const found = scopes.find((s) => s.name === requested || s.branch === requested || s.branch === `${SESSION_BRANCH}${requested}`);
  if (found && found.name !== TRUNK) return { scope: found };
  return {
    scope: trunk,
    fallback: TRUNK,
    requested,
    reason: `no live worktree is on branch '${requested}' or '${SESSION_BRANCH}${requested}' (it was removed, or never existed); showing trunk`,
  };
}

/** A scope name for a write: it must name a live scope; a write never falls back. */
export function requireScope(scopes: readonly ScopeInfo[], requested: string | undefined): ScopeInfo {
  const r = resolveScope(scopes, requested);
  if (r.fallback) {
    const names = scopes.map((s) => s.name).join(', ');
    throw new TrellisError('SCOPE_NOT_FOUND', `no scope '${r.requested}': scopes here are ${names} ('git worktree list' shows the worktrees)`);
  }
  return r.scope;
}

/**
 * Each live scope with the scenarios its worktree's spec tree declares. Trunk's tree can come from a
 * memoized source (the server's watched tree); linked worktrees are read as they are now.
 */
export function scopeDeclarations(p: ProjectContext, scopes: readonly ScopeInfo[], trunkTree?: () => SpecTree): ScopeDeclarations[] {
  const { specRoot } = p.settings();
  return scopes.map((scope, i) => {
    const tree = i === 0 && trunkTree ? trunkTree() : readSpecTree(scope.worktree, specRoot);
    return { scope, scenarios: tree.nodes.flatMap((n) => n.scenarios) };
  });
}
