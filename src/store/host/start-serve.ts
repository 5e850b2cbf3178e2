import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EndpointRecord } from './endpoint-record.js';
import { encodeProject } from '../trellis-home.js';
import { readEndpointRecord } from './online-verdict.js';
import { cliEntry } from './run-cli.js';

export const serveLogPath = (home: string, root: string): string => join(home, 'projects', encodeProject(root), 'serve.log');

/**
 * Starts a detached `trellis serve --port 0` for `root` that outlives its starter (its own session, its
 * output appended to `<home>/projects/<slot>/serve.log`), and waits until its record is online. Resolves
 * with the record, or with the log's tail when it did not come online in time.
 */
export async function startDetachedServe(home: string, root: string, opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ record: EndpointRecord } | { logTail: string }> {
  const already = await readEndpointRecord(home, root);
  if (already.online) return { record: already.record };
  const log = serveLogPath(home, root);
  mkdirSync(join(log, '..'), { recursive: true });
  const fd = openSync(log, 'a');
  let exited = false;
  try {
    const child = spawn(process.execPath, [cliEntry(), 'serve', '--port', '0'], {
      cwd: root,
      env: { ...(opts.env ?? process.env), TRELLIS_HOME: home },
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.once('exit', () => (exited = true));
    child.unref();
  } finally {
    closeSync(fd);
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (Date.now() < deadline && !exited) {
    const v = await readEndpointRecord(home, root, { timeoutMs: 500 });
    if (v.online) return { record: v.record };
    await new Promise((r) => setTimeout(r, 100));
  }
  const text = readFileSync(log, 'utf8');
  return { logTail: text.split('\n').slice(-40).join('\n') };
}
