import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';
import { unsafeRelativePath } from '../safe-path.js';

export const CONFIG_FILE = 'trellis.json';
export const LOCAL_CONFIG_FILE = 'trellis.local.json';

export interface ForgeConfig {
  readonly driver: string;
  readonly host: string;
  /** The forge's project: `owner/name` (GitHub, Forgejo/Gitea); GitLab's `"project"` (id or path) lands here too. */
  readonly repo: string;
  readonly apiUrl?: string;
  readonly tokenEnv?: string;
}

/**
 * A forge the person allows in their own, uncommitted config (`trustedForges` in trellis.local.json or
 * `$TRELLIS_HOME/hub.json`): a committed entry for `host` may then use this `apiUrl` and this `tokenEnv`,
 * which a committed file alone cannot choose (store/forge/trust.ts).
 */
export interface ForgeTrust {
  readonly host: string;
  readonly apiUrl?: string;
  readonly tokenEnv?: string;
}

/**
 * The resolved portable layout: `trellis.json` (committed), overlaid by `trellis.local.json` (git-ignored,
 * this machine only), over the defaults. Only the layout keys below are ever read from either file, so
 * nothing else a local file holds (tokens, notes) can leak through a surface.
 */
export interface Settings {
  readonly specRoot: string;
  /** The branch worktrees fork from; null: the branch the main checkout has checked out. */
  readonly trunk: string | null;
  /** The agent harness `trellis init --harness` recorded (e.g. `claude`), or null. */
  readonly harness: string | null;
  /** Folder of config-root plugins, relative to the project root. */
  readonly pluginRoot: string;
  readonly forges: readonly ForgeConfig[];
  /** Which file named `forges`: the committed one is judged before a token is sent (store/forge/trust.ts); the person's own is theirs. */
  readonly forgesFrom: 'committed' | 'local';
  /** The forges trellis.local.json allows a committed entry to use (never read from trellis.json). */
  readonly trustedForges: readonly ForgeTrust[];
  /** Agent sessions (DESIGN.md §9): the budget and the setup command a new worktree runs. */
  readonly sessions: SessionSettings;
  /** Where session worktrees live; null: `$TRELLIS_HOME/worktrees/<slot>/`. */
  readonly worktreeRoot: string | null;
  /** Which files contributed, for `/api/settings` and `trellis doctor`. */
  readonly sources: { readonly committed: boolean; readonly local: boolean };
}

export interface SessionSettings {
  /** Running sessions at most; null: the number of cores. */
  readonly max: number | null;
  /** The queue launches nothing while the host has less free memory than this (MB). */
  readonly minFreeMb: number;
  /** A shell command run in every new worktree before the agent starts; its log is kept as evidence. */
  readonly setup: string | null;
  /** `checks`: a merge with a regressed or unmeasured-at-head check is refused unless overridden (DESIGN.md §14); `off`: never gated. */
  readonly mergeGate: MergeGate;
  /** Warm worktrees kept checked out at trunk's tip for the next spawns (DESIGN.md §15); 0: none. */
  readonly pool: number;
  /** `bubblewrap`: every session a sandbox can hold runs in one, and a spawn is refused where none can start (issue 45); `off`: none, and each session says so. */
  readonly confine: ConfineSetting;
  /** `host:port` (a bare host: port 443) a confined agent may reach beyond its provider and the package registries (issue 45). */
  readonly network: readonly string[];
  /** US dollars one session may spend on its model before Trellis stops it at `awaiting{budget}` (issue 42); null: no limit. */
  readonly budgetUsd: number | null;
  /** US dollars the project's sessions may spend in a day (UTC) before Trellis stops the one that reaches it; null: no limit. */
  readonly budgetUsdPerDay: number | null;
}

export type MergeGate = 'checks' | 'off';
export type ConfineSetting = 'bubblewrap' | 'off';

export const DEFAULT_SETTINGS: Omit<Settings, 'sources'> = {
  specRoot: 'specs',
  trunk: null,
  harness: null,
  pluginRoot: '.trellis/plugins',
  forges: [],
  forgesFrom: 'committed',
  trustedForges: [],
  sessions: { max: null, minFreeMb: 256, setup: null, mergeGate: 'checks', pool: 2, confine: 'bubblewrap', network: [], budgetUsd: null, budgetUsdPerDay: null },
  worktreeRoot: null,
};

/** Reads one config file: absent reads as `{}`; anything but a top-level JSON object is refused. */
export function readConfigFile(path: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const at = jsonErrorLine(text, (err as Error).message);
    throw new TrellisError('CONFIG_INVALID', `${path}${at ? ` line ${at.line}, column ${at.column}` : ''} is not valid JSON (${(err as Error).message.replace(/ in JSON at position \d+.*$/, '')}); repair: fix ${at ? 'that line' : 'the file'} (or move the file aside to use the defaults), then run 'trellis doctor'`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TrellisError('CONFIG_INVALID', `${path} line 1 must hold a JSON object at the top level; repair: wrap the settings in { }, then run 'trellis doctor'`);
  return raw as Record<string, unknown>;
}

/**
 * Where JSON.parse stopped, as the line and column a person looks for (V8 names only the offset, as
 * "at position N" and, in newer versions, "(line L column C)").
 */
export function jsonErrorLine(text: string, message: string): { line: number; column: number } | null {
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /at position (\d+)/.exec(message);
  const offset = pos ? Number(pos[1]) : /Unexpected end of JSON input/.test(message) ? text.length : -1;
  if (offset < 0) return null;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

export function loadSettings(root: string | null): Settings {
  const committed = root ? readConfigFile(join(root, CONFIG_FILE)) : null;
  const local = root ? readConfigFile(join(root, LOCAL_CONFIG_FILE)) : null;
  const merged = { ...(committed ?? {}), ...(local ?? {}) };
  const str = (key: string, fallback: string | null): string | null => {
    const v = merged[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'string' || v.trim() === '') throw new TrellisError('CONFIG_INVALID', `${CONFIG_FILE}: "${key}" must be a non-empty string`);
    return v;
  };
  const specRoot = str('specRoot', DEFAULT_SETTINGS.specRoot)!.replace(/\/+$/, '');
  const pluginRoot = str('pluginRoot', DEFAULT_SETTINGS.pluginRoot)!.replace(/\/+$/, '');
  for (const [key, value] of [['specRoot', specRoot], ['pluginRoot', pluginRoot]] as const) {
    if (value !== '.' && unsafeRelativePath(value)) {
      throw new TrellisError('CONFIG_INVALID', `${CONFIG_FILE}: "${key}" must be a folder inside the project, not ${JSON.stringify(value)}`);
    }
  }
  return {
    specRoot,
    trunk: str('trunk', null),
    harness: str('harness', null),
    pluginRoot,
    forges: forgesOf(merged.forges),
    forgesFrom: local && local.forges !== undefined ? 'local' : 'committed',
    trustedForges: trustedForgesOf(local?.trustedForges, LOCAL_CONFIG_FILE),
    sessions: sessionsOf(merged.sessions),
    worktreeRoot: str('worktreeRoot', null),
    sources: { committed: committed !== null, local: local !== null },
  };
}

function forgesOf(v: unknown): ForgeConfig[] {
  if (v === undefined) return [];
  const bad = () => new TrellisError('CONFIG_INVALID', `${CONFIG_FILE}: "forges" must be a list of { driver, host, repo (or, for GitLab, project), apiUrl?, tokenEnv? }`);
  if (!Array.isArray(v)) throw bad();
  return v.map((f) => {
    if (typeof f !== 'object' || f === null) throw bad();
    const { driver, host, apiUrl, tokenEnv } = f as Record<string, unknown>;
    const { repo: named, project } = f as Record<string, unknown>;
    // GitLab calls it a project, and its id is a number: either key names the same thing.
    const repo = named ?? (typeof project === 'number' ? String(project) : project);
    if (typeof driver !== 'string' || typeof host !== 'string' || typeof repo !== 'string') throw bad();
    if ((apiUrl !== undefined && typeof apiUrl !== 'string') || (tokenEnv !== undefined && typeof tokenEnv !== 'string')) throw bad();
    return { driver, host, repo, ...(apiUrl ? { apiUrl } : {}), ...(tokenEnv ? { tokenEnv } : {}) };
  });
}

/** `trustedForges: [{host, apiUrl?, tokenEnv?}]` of a person's own config file (`file` names it in the error). */
export function trustedForgesOf(v: unknown, file: string): ForgeTrust[] {
  if (v === undefined || v === null) return [];
  const bad = () => new TrellisError('CONFIG_INVALID', `${file}: "trustedForges" must be a list of { host, apiUrl?, tokenEnv? }`);
  if (!Array.isArray(v)) throw bad();
  return v.map((t) => {
    if (typeof t !== 'object' || t === null) throw bad();
    const { host, apiUrl, tokenEnv } = t as Record<string, unknown>;
    if (typeof host !== 'string' || !host || (apiUrl !== undefined && typeof apiUrl !== 'string') || (tokenEnv !== undefined && typeof tokenEnv !== 'string')) throw bad();
    return { host, ...(apiUrl ? { apiUrl } : {}), ...(tokenEnv ? { tokenEnv } : {}) };
  });
}

function sessionsOf(v: unknown): SessionSettings {
  if (v === undefined || v === null) return DEFAULT_SETTINGS.sessions;
  const bad = () => new TrellisError('CONFIG_INVALID', `${CONFIG_FILE}: "sessions" must be { "max"?: whole number >= 1, "minFreeMb"?: number >= 0, "setup"?: command, "mergeGate"?: "checks" | "off", "pool"?: whole number >= 0, "confine"?: "bubblewrap" | "off", "network"?: ["host:port", …] }`);
  if (typeof v !== 'object' || Array.isArray(v)) throw bad();
  const { max, minFreeMb, setup, mergeGate, pool, confine, network, budgetUsd, budgetUsdPerDay } = v as Record<string, unknown>;
  if (network !== undefined && !(Array.isArray(network) && network.every((n) => typeof n === 'string' && /^[\w.-]+(:\d{1,5})?$|^\[[\d:a-fA-F]+\]:\d{1,5}$/.test(n)))) throw bad();
  for (const [key, value] of [['budgetUsd', budgetUsd], ['budgetUsdPerDay', budgetUsdPerDay]] as const) {
    if (value !== undefined && value !== null && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw new TrellisError('CONFIG_INVALID', `${CONFIG_FILE}: "sessions.${key}" must be a number of US dollars above 0, not ${JSON.stringify(value)}; repair: write it as a plain number (e.g. "${key}": 2.5), or remove it for no limit, then run 'trellis doctor'`);
    }
  }
  if (max !== undefined && max !== null && !(Number.isInteger(max) && (max as number) >= 1)) throw bad();
  if (minFreeMb !== undefined && !(typeof minFreeMb === 'number' && minFreeMb >= 0)) throw bad();
  if (setup !== undefined && setup !== null && (typeof setup !== 'string' || setup.trim() === '')) throw bad();
  if (mergeGate !== undefined && mergeGate !== 'checks' && mergeGate !== 'off') throw bad();
  if (pool !== undefined && !(Number.isInteger(pool) && (pool as number) >= 0)) throw bad();
  if (confine !== undefined && confine !== 'bubblewrap' && confine !== 'off') throw bad();
  return {
    max: (max as number | undefined) ?? null,
    minFreeMb: (minFreeMb as number | undefined) ?? DEFAULT_SETTINGS.sessions.minFreeMb,
    setup: (setup as string | undefined) ?? null,
    mergeGate: (mergeGate as MergeGate | undefined) ?? 'checks',
    pool: (pool as number | undefined) ?? DEFAULT_SETTINGS.sessions.pool,
    confine: (confine as ConfineSetting | undefined) ?? 'bubblewrap',
    network: (network as string[] | undefined) ?? [],
    budgetUsd: (budgetUsd as number | null | undefined) ?? null,
    budgetUsdPerDay: (budgetUsdPerDay as number | null | undefined) ?? null,
  };
}

/** Changes whenever either config file is written, created or removed. */
export function configStamp(root: string | null): string {
  if (!root) return '';
  return [CONFIG_FILE, LOCAL_CONFIG_FILE]
    .map((f) => {
      try {
        const st = statSync(join(root, f), { bigint: true });
        return `${st.mtimeNs}:${st.size}:${st.ino}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}
