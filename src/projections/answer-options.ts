/**
 * Which of a dialog's options a notification offers as actions, and how their words are shortened (issue
 * 43): a phone shows two actions beside "Open", ntfy three buttons in all, each a few words wide.
 */

/** What people usually answer: the dialog's first option (its approval), then its refusal. */
const REFUSAL = /^(no|reject|deny|cancel)\b/i;

/** The indexes of the `n` most likely answers: the first option, then the refusal (else the next one), in the dialog's order. */
export function likelyOptions(options: readonly string[], n: number): number[] {
  if (options.length <= n) return options.map((_, i) => i);
  const picked = [0];
  const refusal = options.findIndex((o, i) => i > 0 && REFUSAL.test(o));
  for (let i = 1; picked.length < n && i < options.length; i++) if (refusal < 0 || i === refusal || picked.length < n - 1) picked.push(i);
  if (refusal > 0 && !picked.includes(refusal)) picked[picked.length - 1] = refusal;
  return picked.sort((a, b) => a - b);
}

/** A label of at most `max` characters: the option's own words, cut at a word and marked `…` when longer. */
export function shortLabel(option: string, max = 28): string {
  const s = option.replace(/\s+/g, ' ').trim();
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const at = cut.search(/[\s,;:(]\S*$/);
  return `${(at > max / 2 ? cut.slice(0, at) : cut).replace(/[\s,;:(]+$/, '')}…`;
}
