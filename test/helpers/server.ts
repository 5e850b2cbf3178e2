import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveProject, type Served } from '../../src/http/serve.js';
import { createDemoProject } from '../../src/store/setup/demo.js';
import { openProject } from '../../src/store/compose/open-project.js';
import { tempDir } from './repo.js';

let template: string | undefined;

/**
 * A fresh copy of the bundled demo project in a temp dir. The demo is made once per test file (some 40 git
 * runs: its commits, their fixed dates and authors, and its threads) and copied for each call: the same
 * bytes a new build would make, in a directory of its own. Made again if `cleanupRepos()` removed it.
 */
export async function demoRepo(): Promise<string> {
  if (template === undefined || !existsSync(template)) {
    template = join(tempDir(), 'demo');
    await createDemoProject(template);
  }
  const dir = join(tempDir(), 'demo');
  cpSync(template, dir, { recursive: true });
  return dir;
}

/** The project's API on a real loopback socket, on a free port. */
export async function serveDir(dir: string): Promise<Served & { get: (path: string, init?: RequestInit) => Promise<Response> }> {
  const served = await serveProject(openProject(dir), { port: 0 });
  return { ...served, get: (path, init) => fetch(new URL(path, served.url), init) };
}

export const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
