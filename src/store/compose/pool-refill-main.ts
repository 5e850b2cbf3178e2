import { execFile } from 'node:child_process';
import { setPriority } from 'node:os';
import { openProject } from './open-project.js';
import { refillPool } from '../sessions/worktrees/worktree-pool.js';

/*
 * `node pool-refill-main.js <project root>`: one refill of the project's worktree pool, started in the
 * background by a spawn (or by the server when trunk moves). Idle priority: lowest CPU niceness and, where
 * util-linux has it, the idle I/O class, so a refill never slows down what a person waits for.
 */
const root = process.argv[2];
if (!root) {
  console.error('usage: pool-refill-main.js <project root>');
  process.exit(2);
}
try {
  setPriority(19);
} catch {}
await new Promise<void>((resolve) => execFile('ionice', ['-c', '3', '-p', String(process.pid)], () => resolve()));
try {
  await refillPool(openProject(root), process.env);
} catch (err) {
  console.error(`trellis: worktree pool refill: ${(err as Error).message}`);
  process.exitCode = 1;
}
