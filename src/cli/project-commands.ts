import { requireRoot } from '../store/project/repository.js';
import { diagnoseProject, type Finding } from '../store/setup/doctor.js';
import { initProject } from '../store/setup/init-project.js';
import { readPlugins, guidanceCatalog } from '../store/project/plugins.js';
import { openProject } from './open-project.js';
import { checkShape, type VerbContext } from './shape.js';
import { out } from './output.js';

/** `trellis guidance [--json]`: the guidance catalog, the same as GET /api/guidance. */
export async function runGuidance(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis guidance [--json]' }, ctx);
  const p = openProject(ctx.cwd);
  const root = requireRoot(p);
  const catalog = guidanceCatalog(root, readPlugins(root, p.settings().pluginRoot));
  await out(ctx.options.json ? `${JSON.stringify(catalog, null, 2)}\n` : catalog.map((e) => `${e.id}  ${e.source.path}  ${e.source.hash.slice(0, 12)}  ${e.title}\n`).join(''));
  return 0;
}

/** `trellis init [--harness <name>] [--git]`: sets a folder up as a Trellis project; running it again changes nothing. */
export async function runInit(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['harness', 'git'], usage: 'trellis init [--harness <name>] [--git]' }, ctx);
  const harness = typeof ctx.options.harness === 'string' ? ctx.options.harness : undefined;
  const { root, said, skipped, uncommitted } = await initProject(ctx.cwd, { ...(harness ? { harness } : {}), git: ctx.options.git === true });
  // What it did, then what it left alone and why: a folder with nodes already gets no index.md, and says so.
  await out(said.length ? [...said, ...skipped].map((s) => `${s}\n`).join('') : `${root} is already a Trellis project; nothing to do\n`);
  // Sessions start from trunk's last commit: until these are committed, none of them sees the spec tree.
  if (uncommitted) await out(`not committed yet: ${uncommitted.paths.join(', ')} (sessions start from trunk's last commit and would not see them); commit them:\n  ${uncommitted.commit}\n`);
  return 0;
}

/** `trellis doctor [--json] [--repair]`: each finding with its repair; exit 1 when any is an error. */
export async function runDoctor(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json', 'repair'], usage: 'trellis doctor [--json] [--repair]' }, ctx);
  return report(ctx, await diagnoseProject(ctx.cwd, { repair: ctx.options.repair === true }));
}

async function report(ctx: VerbContext, findings: Finding[]): Promise<number> {
  await out(
    ctx.options.json
      ? `${JSON.stringify(findings, null, 2)}\n`
      : findings.map((f) => `${f.level === 'ok' ? 'ok   ' : f.level === 'warn' ? 'warn ' : 'error'}  ${f.what}${f.repair ? `\n       repair: ${f.repair}` : ''}\n`).join(''),
  );
  return findings.some((f) => f.level === 'error') ? 1 : 0;
}
