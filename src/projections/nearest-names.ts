/**
 * The known names nearest a mistyped one (issue 39: one rule for unknown nodes — refused, with the nearest
 * names): by edit distance, a name sharing the typed one's last segment counting as near; at most `n`,
 * nearest first. Pure, so the CLI, the API and the page name the same candidates.
 */
export function nearestNames(typed: string, known: Iterable<string>, n = 3): string[] {
  const leaf = typed.slice(typed.lastIndexOf('/') + 1);
  return nearest(typed, known, (name) => name.slice(name.lastIndexOf('/') + 1) === leaf)
    .slice(0, n)
    .map((s) => s.name);
}

/**
 * The known ids (or command words) nearest a mistyped one (issue 44): by edit distance, a known one the
 * typed one begins (a shortened id, `iss` for `issue`) counting as near; only those nearest of all (`isue`
 * is 'issue', not also 'issues' an edit further), at most `n`.
 */
export function nearestIds(typed: string, known: Iterable<string>, n = 3): string[] {
  const scored = nearest(typed, known, (id) => typed.length >= 2 && id.startsWith(typed));
  return scored
    .filter((s) => s.d === scored[0]!.d)
    .slice(0, n)
    .map((s) => s.name);
}

/** The words for a refused unknown node: what was typed and the nearest names, if any. */
export function unknownNodeWords(typed: string, known: Iterable<string>, specRoot: string): string {
  const near = nearestNames(typed, known);
  return `no spec node '${typed}' in ${specRoot}/${near.length ? `; did you mean ${near.map((x) => `'${x}'`).join(', ')}?` : ''}`;
}

/** `; did you mean 'a'?` (or `'a' or 'b'`) for the nearest candidates, or nothing when there are none. */
export function didYouMean(near: readonly string[]): string {
  if (!near.length) return '';
  const quoted = near.map((x) => `'${x}'`);
  return `; did you mean ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`}?`;
}

/** The words for an unknown id: `no issue <typed>; did you mean '<id>'?`, else `no issue <typed><otherwise>`. */
export function unknownIdWords(what: string, typed: string, known: Iterable<string>, otherwise = ''): string {
  const near = nearestIds(typed, known);
  return `no ${what} ${typed}${near.length ? didYouMean(near) : otherwise}`;
}

/** The known names within reach of `typed`, nearest first (ties by name); `alsoNear` counts as one edit. */
function nearest(typed: string, known: Iterable<string>, alsoNear: (name: string) => boolean): { name: string; d: number }[] {
  const scored: { name: string; d: number }[] = [];
  for (const name of known) {
    if (name === typed) continue;
    const d = Math.min(distance(typed, name), alsoNear(name) ? 1 : Infinity);
    if (d <= Math.max(2, Math.floor(typed.length / 3))) scored.push({ name, d });
  }
  return scored.sort((a, b) => a.d - b.d || a.name.localeCompare(b.name));
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
