/*
 * `trellis session ls`: the sessions as the log says, read without the session verbs' module (issue 40):
 * listing loads neither tmux, the launch and delivery, nor the agents' adapters. session-commands.ts keeps
 * it in its action table (help, usage) as this one spec.
 */
import type { Project } from '../store/compose/open-project.js';
import { listSessions } from '../store/sessions/verbs/list-sessions.js';
import { openProject } from './open-project.js';
import { err, out } from './output.js';
import { problemLines } from './render.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import { sessionLine } from './session-text.js';

export const LS_ACTION: Shape & { readonly run: (ctx: VerbContext, p: Project) => Promise<number> } = {
  args: [],
  options: ['all', 'json'],
  usage: 'trellis session ls [--all] [--json]',
  async run(ctx, p) {
    const { sessions, problems } = await listSessions(p, { all: ctx.options.all === true });
    await err(problemLines(problems));
    await out(ctx.options.json ? `${JSON.stringify(sessions)}\n` : sessions.map(sessionLine).join(''));
    // An empty list says so (on stderr, so a script reading stdout still reads nothing).
    if (!ctx.options.json && !sessions.length) await err(ctx.options.all ? "no sessions yet; start one with 'trellis session spawn <task>'\n" : "no open sessions ('trellis session ls --all' lists closed ones; 'trellis session spawn <task>' starts one)\n");
    return 0;
  },
};

/** `trellis session ls [--all] [--json]`, as `runSession('ls', …)` runs it. */
export async function runSessionLs(ctx: VerbContext): Promise<number> {
  checkShape(LS_ACTION, ctx);
  return LS_ACTION.run(ctx, openProject(ctx.cwd));
}
