/**
 * The readers' own entry (issue 40): `trellis board [--json]` and `trellis graph [--json]`, which bin.ts
 * loads instead of run.js when the command line is exactly one of them (entry-choice.ts `readerCall`): the
 * same verbs, output and exit codes as through the command line, without loading its parser (cac) and verb
 * table. The bundle (`dist/cli/board.js`) is made from this module.
 */
import { runBoard, runGraph } from './board-command.js';
import type { ReaderCall } from './entry-choice.js';
import { exitAfterFlush, guardStdio, setMachineOutput } from './output.js';
import { reportError } from './report-error.js';

/** Runs the board or graph verb in this process and exits with its code. */
export async function runReader(call: ReaderCall, cwd: string): Promise<void> {
  guardStdio();
  setMachineOutput(call.json);
  let code: number;
  try {
    const ctx = { cwd, args: [], options: call.json ? { json: true } : {} };
    code = await (call.verb === 'board' ? runBoard(ctx) : runGraph(ctx));
  } catch (e) {
    code = await reportError(e);
  }
  await exitAfterFlush(code);
}
