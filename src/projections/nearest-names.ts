/**
 * The known names nearest a mistyped one (issue 39: one rule for unknown nodes — refused, with the nearest
 * names): by edit distance, a name sharing the typed one's last segment counting as near; at most `n`,
 * nearest first. Pure, so the CLI, the API and the page name the same candidates.
 */
export function nearestNames(typed: string, known: Iterable<string>, n = 3): string[] {
  const leaf = typed.slice(typed.lastIndexOf('/') + 1);
  const scored: { name: string; d: number }[] = [];
  for (const name of known) {
    const d = Math.min(distance(typed, name), name.slice(name.lastIndexOf('/') + 1) === leaf ? 1 : Infinity);
    if (d <= Math.max(2, Math.floor(typed.length / 3))) scored.push({ name, d });
  }
  return scored
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, n)
    .map((s) => s.name);
}

/** The words for a refused unknown node: what was typed and the nearest names, if any. */
export function unknownNodeWords(typed: string, known: Iterable<string>, specRoot: string): string {
  const near = nearestNames(typed, known);
  return `no spec node '${typed}' in ${specRoot}/${near.length ? `; did you mean ${near.map((x) => `'${x}'`).join(', ')}?` : ''}`;
}

/** Levenshtein distance (insert, delete, substitute: 1 each). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
