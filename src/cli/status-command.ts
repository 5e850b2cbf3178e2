import { TrellisError } from '../events/index.js';
import { trellisHome } from '../store/trellis-home.js';
import { readEndpointRecord } from '../store/host/online-verdict.js';
import { openProject } from './open-project.js';
import { checkShape, type VerbContext } from './shape.js';
import { out } from './output.js';

/** `trellis status [--json]`: finds this project's backend through its endpoint record; exit 1 when offline. */
export async function runStatus(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis status [--json]' }, ctx);
  const p = openProject(ctx.cwd);
  if (!p.root) throw new TrellisError('NOT_A_REPOSITORY', 'a bare repository has no backend; run trellis in a checkout');
  const verdict = await readEndpointRecord(trellisHome(), p.root);
  if (ctx.options.json) {
    await out(`${JSON.stringify({ root: p.root, online: verdict.online, ...(verdict.online ? { url: verdict.record.url, instanceId: verdict.record.instanceId, pid: verdict.record.pid } : { reason: verdict.reason }) })}\n`);
  } else {
    await out(
      verdict.online
        ? `online: ${p.root} is served at ${verdict.record.url} (instance ${verdict.record.instanceId}, pid ${verdict.record.pid})\n`
        : `offline: ${p.root} has no running backend (${verdict.reason}); start one with 'trellis serve'\n`,
    );
  }
  return verdict.online ? 0 : 1;
}

/** A bare `trellis`: inside a project, its status; elsewhere, the help. */
export async function bareTrellis(cwd: string, help: () => void): Promise<number> {
  try {
    openProject(cwd);
  } catch {
    help();
    return 0;
  }
  return runStatus({ cwd, args: [], options: {} });
}
