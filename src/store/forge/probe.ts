import type { ProbeStep } from './driver.js';
import type { ForgeHttp } from './http.js';

export interface ProbeTarget {
  readonly store: string;
  readonly api: string;
  /** Whose token: the variable, and whether it is set. */
  readonly tokenEnv: string;
  readonly token: string | undefined;
  /** The scopes the token needs, said in the repair. */
  readonly scopes: string;
  /** The path that answers for the token's own account (`/user`) and for the project. */
  readonly userPath: string;
  readonly projectPath: string;
  /** How trellis.json names the project: `"repo": "acme/shop"`. */
  readonly projectKey: string;
}

/**
 * Doctor's three questions to one forge, in order, each answered with its repair: does it answer at
 * its API URL, is the token accepted, is the project there for that token. A later question is not
 * asked when an earlier one failed (its answer would only repeat the first failure).
 */
export async function probeForge(http: ForgeHttp, t: ProbeTarget): Promise<ProbeStep[]> {
  const steps: ProbeStep[] = [];
  const status = async (path: string) => {
    try {
      await http.request('GET', path);
      return 200;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'FORGE_UNREACHABLE') return 'down' as const;
      const m = / answered (\d{3}) /.exec((err as Error).message);
      return m ? Number(m[1]) : (err as Error).message;
    }
  };
  const user = t.token ? await status(t.userPath) : null;
  if (user === 'down') {
    steps.push({ ok: false, what: `forge ${t.store} is unreachable at ${t.api}`, repair: `check "apiUrl" for ${t.store} in trellis.json (the API root, e.g. ${t.api}) and this machine's network` });
    return steps;
  }
  if (user === null) {
    steps.push({ ok: 'warn', what: `forge ${t.store}: ${t.tokenEnv} is not set; reads of a public project work, writes fail`, repair: `export ${t.tokenEnv}=<a token with ${t.scopes}>` });
  } else if (user === 401 || user === 403) {
    steps.push({ ok: false, what: `forge ${t.store} refused the token in ${t.tokenEnv} (${user})`, repair: `set ${t.tokenEnv} to a valid token with ${t.scopes}` });
    return steps;
  } else if (user !== 200) {
    steps.push({ ok: false, what: `forge ${t.store} could not check the token in ${t.tokenEnv}: ${user}`, repair: `check "apiUrl" for ${t.store} in trellis.json` });
    return steps;
  } else steps.push({ ok: true, what: `forge ${t.store} accepts the token in ${t.tokenEnv}` });
  const project = await status(t.projectPath);
  if (project === 200) steps.push({ ok: true, what: `forge ${t.store}: ${t.projectKey} found` });
  else if (project === 'down') steps.push({ ok: false, what: `forge ${t.store} is unreachable at ${t.api}`, repair: `check "apiUrl" for ${t.store} in trellis.json and this machine's network` });
  else if (project === 404 || project === 401 || project === 403)
    steps.push({ ok: false, what: `forge ${t.store}: ${t.projectKey} not found (${project}) for ${t.token ? `the token in ${t.tokenEnv}` : 'an anonymous reader'}`, repair: `fix ${t.projectKey} in trellis.json, or give the token in ${t.tokenEnv} access to it` });
  else steps.push({ ok: false, what: `forge ${t.store}: reading ${t.projectKey} failed: ${project}`, repair: 'run doctor again; if it persists, read what the forge says' });
  return steps;
}

