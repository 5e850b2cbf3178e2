/**
 * xterm.js's DOM renderer styles itself two ways the page's CSP (`style-src 'self'`, no
 * 'unsafe-inline') refuses: `<style>` elements it fills with its theme, cell sizes and scrollbar colors,
 * and `style` attributes it sets with setAttribute on some cells. Each refusal is a console error and an
 * unstyled terminal. Neither is needed: the CSP governs style elements and attributes, not the CSSOM.
 * So while the terminal is being built, every `<style>` it creates keeps its text out of the element
 * (which stays empty) and in one constructed stylesheet the document adopts, kept in step with every
 * change; and a `style` attribute set by script is applied as `element.style.cssText`, which is the same
 * declaration through the CSSOM. Nothing from the pane reaches this text: it is xterm's own CSS.
 */
export function cspSafeStyles<T>(build: () => T): { built: T; dispose: () => void } {
  installStyleAttributeShim();
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const texts = new Map<HTMLStyleElement, string>();
  const sync = () => sheet.replaceSync([...texts.values()].join('\n'));
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function (this: Document, tag: string, options?: ElementCreationOptions) {
    const el = create.call(this, tag, options);
    if (el instanceof HTMLStyleElement) {
      texts.set(el, '');
      Object.defineProperty(el, 'textContent', {
        configurable: true,
        get: () => texts.get(el) ?? '',
        set: (v: string | null) => (texts.set(el, v ?? ''), sync()),
      });
    }
    return el;
  } as typeof Document.prototype.createElement;
  let built: T;
  try {
    built = build();
  } finally {
    Document.prototype.createElement = create;
  }
  return {
    built,
    dispose: () => {
      texts.clear();
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
    },
  };
}

let shimmed = false;

/** `setAttribute('style', css)` from script becomes `style.cssText = css`: the same styles, through the CSSOM the CSP allows. */
function installStyleAttributeShim(): void {
  if (shimmed) return;
  shimmed = true;
  const set = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) {
      this.style.cssText = String(value);
      return;
    }
    set.call(this, name, value);
  };
}
