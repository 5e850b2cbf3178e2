/**
 * What the `trellis` executable runs: the command line, then an exit once output is flushed. The bundle
 * (`dist/cli/run.js`, built by `npm run build`) is made from this module; `bin.ts` picks it or this.
 */
import { main } from './main.js';
import { exitAfterFlush, guardStdio } from './output.js';

/** Runs one command line in this process and exits with its code. */
export async function run(argv: readonly string[], cwd: string): Promise<void> {
  guardStdio();
  await exitAfterFlush(await main(argv, cwd));
}
