/*
 * `trellis board` and `trellis graph`: the board alone, kept apart from init, doctor and guidance
 * (project-commands.ts), so reading the board loads none of the setup, the sessions' launch or the
 * agents' adapters (issue 40: start-up under 45 ms over Node).
 */
import { boardBytes, type Board } from '../projections/index.js';
import { buildBoard } from '../store/board/board.js';
import { openProject } from './open-project.js';
import { checkShape, type VerbContext } from './shape.js';
import { err, out, outData } from './output.js';
import { noteLines } from './render.js';

/** `trellis graph [--json]`: the board, byte for byte what GET /api/graph answers. */
export async function runGraph(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis graph [--json]' }, ctx);
  const { bytes, notes } = await buildBoard(openProject(ctx.cwd));
  await err(noteLines(notes));
  await outData(bytes);
  return 0;
}

/** `trellis board [--json]`: the board as a readable tree. */
export async function runBoard(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis board [--json]' }, ctx);
  const { board, notes } = await buildBoard(openProject(ctx.cwd));
  await err(noteLines(notes));
  await out(ctx.options.json ? boardBytes(board) : boardText(board));
  return 0;
}

export function boardText(board: Board): string {
  const f = board.freshness;
  const lines = [`${board.specRoot}/  ${board.nodes.length} nodes · ${f.open} open of ${f.threads} issues · ${f.replies} replies${f.latest ? ` · latest ${f.latest}` : ''}`];
  const children = new Map<string | null, Board['nodes'][number][]>();
  for (const n of board.nodes) children.set(n.parent, [...(children.get(n.parent) ?? []), n]);
  const walk = (parent: string | null, indent: string) => {
    const kids = children.get(parent) ?? [];
    kids.forEach((n, i) => {
      const last = i === kids.length - 1;
      const name = parent ? n.id.slice(parent.length + 1) : n.id;
      const marks = [n.status ? `[${n.status}]` : '', n.openIssues.length ? `●${n.openIssues.length} open` : '', n.problem ? `⚠ ${n.problem}` : ''].filter(Boolean).join('  ');
      lines.push(`${indent}${last ? '└─' : '├─'} ${name}  ${n.title}${marks ? `  ${marks}` : ''}`);
      walk(n.id, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  walk(null, '');
  for (const o of board.overlay) {
    const added = o.added?.length ? `; new: ${o.added.map((a) => `${a.id} “${a.title}”`).join(', ')}` : '';
    lines.push(`worktree ${o.worktree} (${o.branch ?? 'detached'}, forked at ${o.forkPoint?.slice(0, 10) ?? '?'}): ${o.nodes.join(', ') || 'no spec changes'}${added}`);
  }
  return `${lines.join('\n')}\n`;
}
