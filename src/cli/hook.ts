/**
 * The command hook's own entry (issue 40): `trellis session signal <id> <event> [--json]`, the command every
 * agent event runs when no serve takes its HTTP hook. bin.ts loads it instead of run.js when the command
 * line is exactly that (entry-choice.ts `hookCall`): the same verb, the same output and exit codes, without
 * loading the command line's parser (cac), the verb table or any issue, eval or forge code. The bundle
 * (`dist/cli/hook.js`) is made from this module; test/import-graph.test.ts keeps its graph from regrowing.
 */
import type { HookCall } from './entry-choice.js';
import { exitAfterFlush, setMachineOutput } from './output.js';
import { reportError } from './report-error.js';
import { runSignal } from './session-signal-command.js';

/** Runs the hook's signal in this process and exits with its code. */
export async function runHook(call: HookCall, cwd: string): Promise<void> {
  setMachineOutput(call.json);
  let code: number;
  try {
    code = await runSignal({ cwd, args: [call.id, call.event], options: call.json ? { json: true } : {} });
  } catch (e) {
    code = await reportError(e);
  }
  await exitAfterFlush(code);
}
