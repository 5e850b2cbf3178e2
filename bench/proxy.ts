/** The supervisor's raw TCP proxy against the child it fronts, side by side in one run. */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './issues.js';
import { report, round, tempRepo } from './lib.js';

function cannon(url: string, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon({ url, connections, duration: 5 }, (err, res) => (err ? reject(err) : resolve(res))));
}

export async function proxyBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env: { ...process.env, TRELLIS_HOME: join(dir, '.home') }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const l = out.split('\n').find((x) => /serving .* port \d+\)/.test(x));
        if (l) resolve(l);
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    const publicUrl = /at (http:\S+)/.exec(line)![1]!;
    const childUrl = `http://127.0.0.1:${/port (\d+)\)/.exec(line)![1]}/`;
    for (const connections of [16, 64]) {
      // Alternate so drift in machine load hits both sides alike.
      const direct: number[] = [];
      const proxied: number[] = [];
      for (let i = 0; i < 3; i++) {
        direct.push((await cannon(new URL('/health', childUrl).href, connections)).requests.average);
        proxied.push((await cannon(new URL('/health', publicUrl).href, connections)).requests.average);
      }
      // Medians of three alternating runs: on 2 cores one run can swing by 15% either way.
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
      const d = median(direct);
      const p = median(proxied);
      report('proxy.throughput.health', { connections, direct_req_per_s: Math.round(d), proxied_req_per_s: Math.round(p), ratio: round(p / d), target_ratio: 0.85 });
    }
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    cleanup();
  }
}
