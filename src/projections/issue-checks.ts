import { isScenarioId } from '../events/index.js';

/*
 * An issue's acceptance (DESIGN.md §14): a `checks:` list in its body names the scenarios that must pass
 * for the work on it to count. Kept in the body, so a forge issue carries it as a local one does:
 *
 *   checks: checkout/pays, checkout/refunds
 *
 * or as a list, one `- <scenario>` a line below a bare `checks:` line.
 */

const HEAD = /^\s*checks:\s*(.*)$/i;
const ITEM = /^\s*[-*]\s+(\S+)\s*$/;

/** The scenarios an issue body's `checks:` lines name, in order, once each; and the first entry that is not a scenario id. */
export function issueChecks(body: string): { checks: string[]; problem?: string } {
  const out: string[] = [];
  let problem: string | undefined;
  const take = (s: string) => {
    const id = s.trim().replace(/^`|`$/g, '');
    if (!id) return;
    if (!isScenarioId(id)) problem ??= `'${id}' in the issue's checks is not a scenario id (e.g. checkout/happy-path)`;
    else if (!out.includes(id)) out.push(id);
  };
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = HEAD.exec(lines[i]!);
    if (!m) continue;
    if (m[1]!.trim()) m[1]!.split(/[,\s]+/).forEach(take);
    else for (let j = i + 1; j < lines.length && ITEM.test(lines[j]!); j++) take(ITEM.exec(lines[j]!)![1]!);
  }
  return problem ? { checks: out, problem } : { checks: out };
}

/** The body with a `checks:` line naming `checks` appended (none: the body as it is). */
export function withChecks(body: string, checks: readonly string[]): string {
  if (checks.length === 0) return body;
  return `${body.replace(/\s+$/, '')}${body.trim() ? '\n\n' : ''}checks: ${checks.join(', ')}\n`;
}
