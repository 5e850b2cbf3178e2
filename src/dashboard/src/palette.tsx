import { signal } from '@preact/signals';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

/** One thing the palette can reach: a place to go (`href`) or an action to run (`run`). */
export interface PaletteItem {
  readonly kind: 'node' | 'issue' | 'session' | 'project' | 'action' | 'view';
  readonly label: string;
  /** Extra text matched and shown dimmed: an id, a state. */
  readonly hint?: string;
  readonly href?: string;
  readonly run?: () => void;
}

const KIND_LABEL: Record<PaletteItem['kind'], string> = { node: 'node', issue: 'issue', session: 'session', project: 'project', action: 'action', view: 'go to' };

export const paletteOpen = signal(false);
export const shortcutsOpen = signal(false);

/** How many matches the palette lists (the rest narrow as one types). */
const SHOWN = 50;

/** Every word typed appears in the label or hint; label matches rank first, then shorter labels. */
export function matchItems(items: readonly PaletteItem[], query: string): PaletteItem[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return items.slice(0, SHOWN);
  const scored: { item: PaletteItem; score: number }[] = [];
  for (const item of items) {
    const label = item.label.toLowerCase();
    const hay = `${label}\n${(item.hint ?? '').toLowerCase()}\n${item.kind}`;
    if (!words.every((w) => hay.includes(w))) continue;
    scored.push({ item, score: words.reduce((s, w) => s + (label.startsWith(w) ? 3 : label.includes(w) ? 2 : 0), 0) * 1000 - label.length });
  }
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, SHOWN)
    .map((s) => s.item);
}

/**
 * The command palette (Ctrl/⌘-K): type to find any node, issue, session or project, or an action, and
 * Enter goes there. `items` is asked each time it opens, so what it offers is as of now.
 */
export function Palette({ items }: { items: () => Promise<readonly PaletteItem[]> | readonly PaletteItem[] }) {
  const open = paletteOpen.value;
  const [all, setAll] = useState<readonly PaletteItem[]>([]);
  const [query, setQuery] = useState('');
  const [at, setAt] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const opener = useRef<Element | null>(null);
  useEffect(() => {
    if (!open) return;
    opener.current = document.activeElement;
    setQuery('');
    setAt(0);
    void Promise.resolve(items()).then(setAll);
    input.current?.focus();
    return () => (opener.current as HTMLElement | null)?.focus?.();
  }, [open]);
  const shown = useMemo(() => matchItems(all, query), [all, query]);
  if (!open) return null;
  const choose = (item: PaletteItem | undefined) => {
    if (!item) return;
    paletteOpen.value = false;
    if (item.run) item.run();
    else if (item.href) location.assign(item.href);
  };
  const onKey = (e: preact.TargetedKeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || (e.key === 'n' && e.ctrlKey)) setAt((i) => Math.min(shown.length - 1, i + 1));
    else if (e.key === 'ArrowUp' || (e.key === 'p' && e.ctrlKey)) setAt((i) => Math.max(0, i - 1));
    else if (e.key === 'Enter') choose(shown[at]);
    else if (e.key === 'Escape') paletteOpen.value = false;
    else return;
    e.preventDefault();
  };
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && (paletteOpen.value = false)}>
      <div class="palette" role="dialog" aria-modal="true" aria-label="Command palette">
        <input
          ref={input}
          type="text"
          role="combobox"
          aria-expanded={true}
          aria-controls="palette-list"
          aria-activedescendant={shown[at] ? `palette-${at}` : undefined}
          placeholder="Jump to a node, issue, session, project, or run an action…"
          value={query}
          onInput={(e) => (setQuery((e.currentTarget as HTMLInputElement).value), setAt(0))}
          onKeyDown={onKey}
        />
        <ul id="palette-list" role="listbox" class="palette-list" data-testid="palette-list">
          {shown.map((item, i) => (
            <li
              key={`${item.kind} ${item.label} ${item.href ?? ''}`}
              id={`palette-${i}`}
              role="option"
              aria-selected={i === at}
              class={i === at ? 'active' : undefined}
              onMouseMove={() => setAt(i)}
              onClick={() => choose(item)}
            >
              <span class={`chip kind kind-${item.kind}`}>{KIND_LABEL[item.kind]}</span>
              <span class="palette-label">{item.label}</span>
              {item.hint ? <span class="muted palette-hint">{item.hint}</span> : null}
            </li>
          ))}
          {!shown.length ? <li class="muted">Nothing matches “{query}”.</li> : null}
        </ul>
        <p class="muted small palette-foot">↑↓ to move · Enter to go · Esc to close · ? for every shortcut</p>
      </div>
    </div>
  );
}

const SHORTCUTS: readonly [string, string][] = [
  ['Ctrl K  /  ⌘ K', 'command palette: jump anywhere, run an action'],
  ['j  /  k', 'next / previous item in a list'],
  ['Enter', 'open the focused item'],
  ['↑ ↓  Home  End', 'move in a list (arrow keys)'],
  ['g i', 'go to the inbox'],
  ['?', 'this help'],
  ['Esc', 'close a dialog'],
];

export function ShortcutsHelp() {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (shortcutsOpen.value) close.current?.focus();
  }, [shortcutsOpen.value]);
  if (!shortcutsOpen.value) return null;
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && (shortcutsOpen.value = false)}>
      <div class="palette shortcuts" role="dialog" aria-modal="true" aria-labelledby="shortcuts-h" onKeyDown={(e) => e.key === 'Escape' && (shortcutsOpen.value = false)}>
        <div class="row-head">
          <h2 id="shortcuts-h">Keyboard shortcuts</h2>
          <button ref={close} class="button small" onClick={() => (shortcutsOpen.value = false)}>
            Close
          </button>
        </div>
        <dl class="keys">
          {SHORTCUTS.map(([k, what]) => (
            <div key={k}>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
      </div>
    </div>
  );
}

/** Whether a key press belongs to a field being typed in (then single-letter shortcuts stay out of it). */
const typing = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) || !!t.closest('.xterm'));

let lastKey = '';

/**
 * The page's keyboard: Ctrl/⌘-K the palette, `?` the shortcuts, `j`/`k` through the current view's list
 * (its `[data-nav]` links, in order), `g i` the inbox. Installed once per page.
 */
export function installShortcuts(inbox: string): void {
  addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      shortcutsOpen.value = false;
      paletteOpen.value = !paletteOpen.value;
      return;
    }
    // Escape closes the shortcuts wherever the focus is (it reaches the dialog's own button only after
    // the dialog has rendered; a quick Escape used to land on the page behind and leave it open).
    if (e.key === 'Escape' && shortcutsOpen.value) {
      shortcutsOpen.value = false;
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || paletteOpen.value) return;
    const prev = lastKey;
    lastKey = e.key;
    if (e.key === '?') {
      e.preventDefault();
      shortcutsOpen.value = !shortcutsOpen.value;
    } else if (e.key === 'j' || e.key === 'k') {
      const items = Array.from(document.querySelectorAll<HTMLElement>('main [data-nav]')).filter((el) => el.offsetParent !== null);
      if (!items.length) return;
      const i = items.indexOf(document.activeElement as HTMLElement);
      const next = items[e.key === 'j' ? Math.min(items.length - 1, i + 1) : i < 0 ? 0 : Math.max(0, i - 1)];
      next?.focus();
      next?.scrollIntoView({ block: 'nearest' });
      e.preventDefault();
    } else if (e.key === 'i' && prev === 'g') {
      location.assign(inbox);
    }
  });
}
