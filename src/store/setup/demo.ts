import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeEvent, parseThreadEvent, type ThreadEvent } from '../../events/index.js';
import { GitAppendLog } from '../git/append-log.js';
import { threadRef } from '../issues/thread-store.js';
import { packageRoot } from '../package-root.js';

/** Where the bundled demo project's source lives: `fixtures/demo` of the package. */
export const demoSource = (): string => join(packageRoot().dir, 'fixtures', 'demo');

/**
 * Builds the demo project in `dest` (an empty or absent folder): a git repository whose history replays
 * `fixtures/demo/steps/*` in order (each step's files, its renames, its `commit.json` author, date and
 * message), with the issue threads of `fixtures/demo/threads.ndjson` appended as real refs. The same
 * input gives the same commits, byte for byte.
 */
export async function createDemoProject(dest: string, source = demoSource()): Promise<void> {
  mkdirSync(dest, { recursive: true });
  const git = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    execFileSync('git', args, { cwd: dest, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  git(['init', '-q', '-b', 'main']);
  git(['config', 'user.name', 'Trellis Demo']);
  git(['config', 'user.email', 'demo@trellis.invalid']);
  git(['config', 'commit.gpgsign', 'false']);
  const steps = join(source, 'steps');
  for (const step of readdirSync(steps).sort()) {
    const meta = JSON.parse(readFileSync(join(steps, step, 'commit.json'), 'utf8')) as { date: string; author: string; message: string; renames: [string, string][] };
    for (const [from, to] of meta.renames) git(['mv', from, to]);
    cpSync(join(steps, step), dest, { recursive: true, filter: (src) => !src.endsWith('commit.json') });
    git(['add', '-A']);
    const email = `${meta.author.toLowerCase().replace(/[^a-z]+/g, '.')}@leaf-and-kettle.invalid`;
    git(['commit', '-q', '-m', meta.message], {
      GIT_AUTHOR_NAME: meta.author,
      GIT_AUTHOR_EMAIL: email,
      GIT_AUTHOR_DATE: meta.date,
      GIT_COMMITTER_NAME: meta.author,
      GIT_COMMITTER_EMAIL: email,
      GIT_COMMITTER_DATE: meta.date,
    });
  }
  await appendThreads(join(dest, '.git'), join(source, 'threads.ndjson'));
}

async function appendThreads(gitdir: string, ndjson: string): Promise<void> {
  const byStream = new Map<string, ThreadEvent[]>();
  readFileSync(ndjson, 'utf8')
    .split('\n')
    .filter(Boolean)
    .forEach((line, i) => {
      const { stream, event } = JSON.parse(line) as { stream: string; event: unknown };
      const parsed = parseThreadEvent(JSON.stringify(event));
      if (!parsed.ok) throw new Error(`${ndjson}:${i + 1}: ${parsed.reason}`);
      byStream.set(stream, [...(byStream.get(stream) ?? []), parsed.event]);
    });
  const log = new GitAppendLog(gitdir);
  for (const [id, events] of byStream) {
    const tip = log.commit(
      null,
      events.map((e) => ({ bytes: Buffer.from(JSON.stringify(e)), subject: describeEvent(e), author: e.by, at: new Date(e.at) })),
    );
    if (!(await log.swap(threadRef(id), null, tip))) throw new Error(`demo thread ${id} already exists in ${gitdir}`);
  }
}
