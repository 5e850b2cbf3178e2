// The commands a person runs to merge a session whose agent reads no prose (a `shell`): one text, built
// here so the CLI's refusal, `trellis review` and the session page's card say the same thing. Pure (the
// dashboard imports it too).

/** A word for a POSIX shell, quoted only when it needs it: the commands are read and copied by a person. */
export const shellWord = (s: string): string => (/^[\w./@:+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Where and what: the main checkout by its absolute path, and its two commands, one a line. */
export interface MergeByHand {
  /** The project's main checkout (absolute). */
  readonly main: string;
  /** The commands, one a line: trunk checked out there, then the branch merged with no editor opened. */
  readonly commands: string;
}

/**
 * `git -C <main>` so they run from any folder; `switch` first so the merge lands on trunk whatever the
 * main checkout had checked out (a no-op when it is there already); `--no-edit` because `git merge
 * --no-ff` in a terminal opens an editor for the merge message, which strands someone who never meant
 * to write one.
 */
export function mergeByHand(main: string, trunk: string, branch: string): MergeByHand {
  const at = `git -C ${shellWord(main)}`;
  return { main, commands: `${at} switch ${shellWord(trunk)}\n${at} merge --no-ff --no-edit ${shellWord(branch)}` };
}
