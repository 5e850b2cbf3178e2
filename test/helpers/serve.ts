import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { ROOT, tempDir } from './repo.js';

/**
 * A private copy of the built package, so a test can edit the code a running supervisor's child imports
 * (the way a developer's rebuild does) without touching the tree other tests run from.
 */
export function packageCopy(): string {
  const dir = join(tempDir(), 'trellis-pkg');
  mkdirSync(dir);
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  symlinkSync(join(ROOT, 'fixtures'), join(dir, 'fixtures'));
  return dir;
}

export interface ServeProcess {
  readonly proc: ChildProcess;
  readonly url: string;
  readonly lines: string[];
  readonly errLines: string[];
  /** Resolves with the first stdout line (seen so far or later) matching `re`. */
  line(re: RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `trellis serve` from a package dir in `cwd` and waits until it prints its URL. */
export async function startServe(pkg: string, cwd: string, env: NodeJS.ProcessEnv, args: string[] = ['--port', '0']): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [join(pkg, 'dist/src/cli/bin.js'), 'serve', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const errLines: string[] = [];
  const waiters: { re: RegExp; stream: 'stdout' | 'stderr'; resolve: (l: string) => void }[] = [];
  const feed = (stream: 'stdout' | 'stderr', into: string[]) => {
    let rest = '';
    return (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop()!;
      for (const l of parts) {
        into.push(l);
        for (const w of [...waiters]) if (w.stream === stream && w.re.test(l)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(l));
      }
    };
  };
  proc.stdout!.on('data', feed('stdout', lines));
  proc.stderr!.on('data', feed('stderr', errLines));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const line = (re: RegExp, stream: 'stdout' | 'stderr' = 'stdout') => {
    const seen = (stream === 'stdout' ? lines : errLines).find((l) => re.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      waiters.push({ re, stream, resolve });
      void exited.then((code) => reject(new Error(`serve exited (${code}) before printing ${re}; stdout: ${lines.join(' | ')}; stderr: ${errLines.join(' | ')}`)));
    });
  };
  const serving = await line(/serving .* at (http:\S+)/);
  const url = /at (http:\S+)/.exec(serving)![1]!;
  return {
    proc,
    url,
    lines,
    errLines,
    line,
    exited,
    stop: async (signal = 'SIGINT') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export function writeInject(dir: string, code: string): string {
  const path = join(dir, 'inject.mjs');
  writeFileSync(path, code);
  return path;
}

export interface Tally {
  ok: number;
  failed: string[];
  children: Set<string>;
}

/**
 * GET /health and GET /api/instance under `url` in a loop until `stop()`, keep-alive on (an agent) or off
 * (Connection: close), tallying answers, failures and the child (X-Trellis-Child) that answered.
 */
export function loadLoop(url: string, keepAlive: boolean, tally: Tally): { stop: () => Promise<void> } {
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      await new Promise<void>((resolve) => {
        const path = i % 2 ? 'health' : 'api/instance';
        const req = http.get(new URL(path, url), { agent: agent ?? false, headers: keepAlive ? {} : { Connection: 'close' } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) tally.ok++;
            else tally.failed.push(`${path} → ${res.statusCode}`);
            tally.children.add(String(res.headers['x-trellis-child']));
            resolve();
          });
          res.on('error', (e) => (tally.failed.push(`${path}: ${e.message}`), resolve()));
        });
        req.on('error', (e) => (tally.failed.push(`${path}: ${e.message}`), resolve()));
      });
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      agent?.destroy();
    },
  };
}
