import { statSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { CONFIG_FILE, LOCAL_CONFIG_FILE, readConfigFile, trustedForgesOf, type ForgeConfig, type ForgeTrust, type Settings } from '../project/config.js';
import { trellisHome } from '../trellis-home.js';
import { FORGE_DEFAULTS } from './defaults.js';

/**
 * A token goes only to its forge (issue 46). A committed trellis.json is the repository's word, and a
 * cloned repository may be hostile: it names which forge a project's issues live on, but it cannot choose
 * where the person's credential is sent. An entry of it is used only when its API is https on the forge's
 * own host (`api.github.com` is on `github.com`) and its token variable is the driver's documented
 * default; anything else needs the person's own allowance, `trustedForges` in trellis.local.json or
 * `$TRELLIS_HOME/hub.json`. Forges named in trellis.local.json are the person's own and are used as
 * written. A refused entry gets no driver, so no request is made; every surface says which and why.
 */

export interface ForgeRefusal {
  /** `trellis.json forges[1] (github.com)`: which entry. */
  readonly entry: string;
  readonly host: string;
  readonly why: string;
  readonly repair: string;
}

export interface ForgeJudgement {
  readonly allowed: readonly ForgeConfig[];
  readonly refused: readonly ForgeRefusal[];
}

const trim = (url: string): string => url.replace(/\/+$/, '');
const hostnameOf = (host: string): string => host.toLowerCase().replace(/^\[|\]$/g, '').replace(/:\d+$/, '');

/** Sorts a settings' forges into those a token may be sent to and those refused, with why. */
export function judgeForges(settings: Pick<Settings, 'forges' | 'forgesFrom' | 'trustedForges'>, hubTrust: readonly ForgeTrust[] = hubTrustedForges()): ForgeJudgement {
  if (settings.forgesFrom === 'local') return { allowed: settings.forges, refused: [] };
  const allowed: ForgeConfig[] = [];
  const refused: ForgeRefusal[] = [];
  const trust = [...settings.trustedForges, ...hubTrust];
  settings.forges.forEach((f, i) => {
    const defaults = FORGE_DEFAULTS[f.driver];
    // An unknown driver makes no driver and no request; the slice and doctor say so themselves.
    if (!defaults) return void allowed.push(f);
    const why = refusal(f, defaults, trust.filter((t) => t.host === f.host));
    if (!why) return void allowed.push(f);
    const api = trim(f.apiUrl ?? defaults.apiUrl(f.host));
    const tokenEnv = f.tokenEnv ?? defaults.tokenEnv;
    const allow = JSON.stringify({ host: f.host, ...(f.apiUrl ? { apiUrl: api } : {}), ...(f.tokenEnv ? { tokenEnv } : {}) });
    refused.push({
      entry: `${CONFIG_FILE} forges[${i}] (${f.host})`,
      host: f.host,
      why,
      repair: `if you trust it, allow it in your own ${LOCAL_CONFIG_FILE} (or $TRELLIS_HOME/hub.json): "trustedForges": [${allow}]; otherwise fix or remove the entry`,
    });
  });
  return { allowed, refused };
}

function refusal(f: ForgeConfig, defaults: { apiUrl: (host: string) => string; tokenEnv: string }, trust: readonly ForgeTrust[]): string | null {
  const api = trim(f.apiUrl ?? defaults.apiUrl(f.host));
  const trustedApi = trust.some((t) => t.apiUrl !== undefined && trim(t.apiUrl) === api);
  if (!trustedApi) {
    let url: URL;
    try {
      url = new URL(api);
    } catch {
      return `"apiUrl" ${JSON.stringify(api)} is not a URL`;
    }
    if (url.protocol !== 'https:') return `"apiUrl" ${api} is not https: a token sent there crosses the network in clear, and a committed file cannot choose that`;
    const own = hostnameOf(f.host);
    const at = hostnameOf(url.hostname);
    if (at !== own && !at.endsWith(`.${own}`)) return `"apiUrl" ${api} is not on ${f.host}: a committed file cannot send a token to another host`;
  }
  const tokenEnv = f.tokenEnv ?? defaults.tokenEnv;
  if (tokenEnv !== defaults.tokenEnv && !trust.some((t) => t.tokenEnv === tokenEnv)) {
    return `"tokenEnv" names ${tokenEnv}, not the ${f.driver} driver's ${defaults.tokenEnv}: a committed file cannot choose which of your variables is sent`;
  }
  return null;
}

// Module-level on purpose: a memo of a fact on disk (hub.json's trustedForges), re-read when the file changes.
let hubMemo: { path: string; stamp: string; trust: readonly ForgeTrust[]; checked: number } | undefined;

/** How often the file is looked at again: a server asks on every read of its forges, a stat each time would be waste. */
const RECHECK_MS = 1000;

/** `trustedForges` of `$TRELLIS_HOME/hub.json`, the person's host-wide allowance; re-read when the file changes (seen within a second). */
export function hubTrustedForges(home: string = trellisHome(), now = Date.now()): readonly ForgeTrust[] {
  const path = join(home, 'hub.json');
  if (hubMemo?.path === path && now - hubMemo.checked < RECHECK_MS) return hubMemo.trust;
  let stamp = '-';
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st) stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    // Unreadable: as absent, no allowance.
  }
  if (hubMemo?.path === path && hubMemo.stamp === stamp) {
    hubMemo.checked = now;
    return hubMemo.trust;
  }
  let trust: readonly ForgeTrust[] = [];
  try {
    trust = stamp === '-' ? [] : trustedForgesOf(readConfigFile(path)?.trustedForges, path);
  } catch (err) {
    // A broken hub.json allows nothing: the gateway reports the file itself.
    if (!(err instanceof TrellisError)) throw err;
  }
  hubMemo = { path, stamp, trust, checked: now };
  return trust;
}

/** One line per refused entry, for the surfaces (issue ls's stderr, the page, doctor). */
export const refusalLine = (r: ForgeRefusal): string => `forge ${r.entry} is not used, no request is made: ${r.why}`;
