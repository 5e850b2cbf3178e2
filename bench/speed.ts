/**
 * `npm run bench -- speed`: the rows of issue 22 ("fast where a person waits"), each measured side by
 * side with what it is compared to, in one run, with the load average in every line. Sizes are
 * configurable for a quick look (BENCH_SPEED_FILES, BENCH_SPEED_THREADS: comma-separated).
 */
import { spawnPoolTiming } from './sessions.js';

const list = (v: string | undefined, fallback: number[]) => (v ? v.split(',').map(Number) : fallback);

export async function speedBench(): Promise<void> {
  for (const files of list(process.env.BENCH_SPEED_FILES, [5_000, 50_000])) await spawnPoolTiming(files, files > 20_000 ? 5 : 10);
}
