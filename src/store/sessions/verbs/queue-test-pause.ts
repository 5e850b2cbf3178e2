import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Where a test can hold a queue pass, so two processes' passes overlap by design rather than by timing
 * luck (the supervisor's equivalent is supervisor/test-pauses.ts). With `TRELLIS_TEST_QUEUE_PAUSE=<dir>`
 * a pass reaching a point writes `<dir>/<point>.<pid>` and waits there until `<dir>/<point>.go` exists:
 * `arrived` before it takes the queue's lock (the session log already holds what the caller wrote),
 * `counted` once it has read the sessions and counted the budget. Without the variable both are no-ops.
 */
export async function queueTestPause(point: 'arrived' | 'counted', env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const dir = env.TRELLIS_TEST_QUEUE_PAUSE;
  if (!dir) return;
  writeFileSync(join(dir, `${point}.${process.pid}`), '');
  const go = join(dir, `${point}.go`);
  const deadline = Date.now() + 30_000;
  while (!existsSync(go)) {
    if (Date.now() > deadline) throw new Error(`test pause: ${go} did not appear within 30s`);
    await sleep(10);
  }
}
