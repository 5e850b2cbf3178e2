/**
 * xterm.js's DOM renderer writes its theme (colors, the cursor, selection) and its cell sizes into
 * `<style>` elements inside the terminal. The page's CSP (`style-src 'self'`, no inline styles) rightly
 * refuses to apply those, which leaves the terminal uncolored. The CSP governs style *elements*, not the
 * CSSOM: so their text is mirrored into one constructed stylesheet the document adopts, kept in step
 * with every change xterm makes. Nothing from the pane reaches this text; it is xterm's own CSS.
 */
export function mirrorInlineStyles(root: HTMLElement): () => void {
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const styles = Array.from(root.querySelectorAll('style'));
  const sync = () => sheet.replaceSync(styles.map((s) => s.textContent ?? '').join('\n'));
  // Watch the style elements themselves, not the terminal: its rows change on every byte of output.
  const watch = new MutationObserver(sync);
  for (const s of styles) watch.observe(s, { childList: true, characterData: true, subtree: true });
  sync();
  return () => {
    watch.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}
