import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { BIN } from './issues.js';

/** Spawns a CLI process and resolves with the first stdout line matching `re`, and when it was seen (for latencies from a start). */
export async function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv, re: RegExp): Promise<{ child: ChildProcess; line: string; at: number }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const seen = await new Promise<{ line: string; at: number }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((x) => re.test(x));
      if (line) resolve({ line, at: performance.now() });
    });
    child.on('exit', (code) => reject(new Error(`trellis ${args.join(' ')} exited ${code}`)));
  });
  return { child, ...seen };
}
