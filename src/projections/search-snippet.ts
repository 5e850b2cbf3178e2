/**
 * A spec node's Markdown as the plain text a search result shows: no heading hashes, emphasis marks, link
 * targets, list bullets or fences ("## Ranking" reads "Ranking"). Not a Markdown parser: the marks a snippet
 * of a line or two would show raw are dropped, the words stay.
 */
export function plainText(markdown: string): string {
  return markdown
    .replace(/^(```|~~~).*$/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/gm, '')
    .replace(/^\s*(?:[-*_]\s*){3,}$/gm, '')
    .replace(/^\s*\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*$/gm, '')
    .replace(/\|/g, ' ')
    .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)([^*_\n]*?\S)[*_](?![\w*])/g, '$1$2')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/<[^>\n]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Up to 140 characters of a node's text around the first word searched for (its start when absent), in plain text. */
export function searchSnippet(markdown: string, word: string | undefined): string {
  const text = plainText(markdown);
  const at = word ? text.toLowerCase().indexOf(word.toLowerCase()) : -1;
  if (at < 0) return text.length > 140 ? `${text.slice(0, 140)}…` : text;
  const from = Math.max(0, at - 40);
  return `${from > 0 ? '…' : ''}${text.slice(from, at + 100)}${at + 100 < text.length ? '…' : ''}`;
}
