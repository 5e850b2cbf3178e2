import type { ComponentChildren } from 'preact';
import { signal } from '@preact/signals';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { configError } from './api';
import { wordsFor, type PageAction } from './error-words';
import './error-box.css';
import { renderMarkdown } from './markdown';
import type { LinkState } from './live';
import type { Freshness, Label } from './types';

/** Rendered Markdown; the HTML comes from markdown-it with raw HTML off, so it is safe to insert. */
export function Markdown({ src, class: cls }: { src: string; class?: string }) {
  const html = useMemo(() => renderMarkdown(src), [src]);
  if (!src.trim()) return <p class="muted">(no text)</p>;
  return <div class={`md ${cls ?? ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * An error as a person reads it: a title saying what did not happen, what happened and what to do next,
 * in the page's words (error-words.ts: from the code, the answer's details and `action`, the page's action
 * that met it). The stable code stays out of the text (it is in `data-code`, for tests and bug reports).
 */
export function ErrorBox({ error, title, action, children }: { error: unknown; title?: string; action?: PageAction; children?: ComponentChildren }) {
  if (!error) return null;
  const e = error as { code?: string; details?: { logTail?: unknown } };
  const words = wordsFor(error, action);
  // A program's own output (a serve's log tail) is shown as it is, below the page's words.
  const log = typeof e.details?.logTail === 'string' && e.details.logTail ? e.details.logTail : null;
  return (
    <div class="error" role="alert" data-code={e.code}>
      <strong>{title ?? 'Something went wrong'}</strong>
      <div>{words.message}</div>
      {words.next ? <div class="next-step">{words.next}</div> : null}
      {log ? <pre class="log-tail">{log}</pre> : null}
      {children}
    </div>
  );
}

/** The project's trellis.json cannot be used: said on every view, with the file, line and repair. */
export function ConfigBanner() {
  const message = configError.value;
  if (!message) return null;
  return (
    <div class="error config-error" role="alert" data-testid="config-error">
      <strong>This project’s configuration is broken</strong>
      <div>{message}</div>
      <div class="next-step">Issues can still be read and written; the board, sessions and eval need the configuration. The page recovers by itself once the file is fixed.</div>
    </div>
  );
}

const LINK_TEXT: Record<LinkState, string> = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…' };
const LINK_HELP: Record<LinkState, string> = {
  connecting: 'Opening the live connection to the backend',
  live: 'Changes made anywhere (this page, the CLI, git) appear here without a reload',
  reconnecting: 'The connection to the backend dropped; retrying with backoff. The page keeps what it showed.',
};

export function LinkBadge({ state }: { state: LinkState }) {
  return (
    <span class={`link link-${state}`} role="status" data-testid="link-state" title={LINK_HELP[state]}>
      <span class="dot" aria-hidden="true" />
      {LINK_TEXT[state]}
    </span>
  );
}

export function FreshnessStamp({ f }: { f: Freshness }) {
  return (
    <span class="freshness" data-testid="freshness" title={`revision ${f.revision}: the sum of every thread's event count; it changes on any write`}>
      <b>{f.open}</b> open of {f.threads} issues · {f.replies} replies · last activity {f.latest ? <Ago at={f.latest} /> : 'never'}
    </span>
  );
}

/** One clock for every relative time on the page, ticking twice a minute (not one timer per row). */
const clock = signal(Date.now());
setInterval(() => (clock.value = Date.now()), 30_000);

export function Ago({ at }: { at: string }) {
  void clock.value;
  return (
    <time dateTime={at} title={new Date(at).toLocaleString()}>
      {ago(at)}
    </time>
  );
}

export function ago(at: string): string {
  const s = Math.max(0, (Date.now() - Date.parse(at)) / 1000);
  if (!Number.isFinite(s)) return at;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 60) return `${Math.floor(s / 86400)} d ago`;
  return new Date(at).toLocaleDateString();
}

export function StoreChip({ store }: { store: string }) {
  return (
    <span class={`chip store ${store === 'local' ? 'store-local' : 'store-forge'}`} title={store === 'local' ? 'kept in this git repository' : `an issue on the forge ${store}`}>
      {store}
    </span>
  );
}

/** A status in the words people use: a local thread's `landed` (the API's and the CLI's value) reads "closed". */
export const statusWords = (status: string): string => (status === 'landed' ? 'closed' : status);

export function StatusChip({ status }: { status: string }) {
  return (
    <span class={`chip status status-${status.replace(/[^a-z]/gi, '')}`} data-status={status}>
      {statusWords(status)}
    </span>
  );
}

export function Labels({ labels }: { labels: readonly Label[] }) {
  if (!labels.length) return null;
  return (
    <span class="labels">
      {labels.map((l) => (
        <span class="chip label" key={l.name} style={l.color && /^[0-9a-f]{3,8}$/i.test(l.color) ? { background: `#${l.color}`, color: l.textColor && /^[0-9a-f]{3,8}$/i.test(l.textColor) ? `#${l.textColor}` : contrast(l.color) } : undefined}>
          {l.name}
        </span>
      ))}
    </span>
  );
}

function contrast(hex: string): string {
  const h = hex.length === 3 ? hex.replace(/./g, '$&$&') : hex.slice(0, 6);
  const n = parseInt(h, 16);
  const lum = 0.299 * ((n >> 16) & 255) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
  return lum > 150 ? '#1b1f24' : '#ffffff';
}

/** A unified diff, one line per row, colored by its first character. */
export function Diff({ text, label }: { text: string; label: string }) {
  if (!text.trim()) return <p class="muted">No textual change.</p>;
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      {text.split('\n').map((l, i) => (
        <span key={i} class={l.startsWith('+++') || l.startsWith('---') ? 'dh' : l.startsWith('+') ? 'da' : l.startsWith('-') ? 'dd' : l.startsWith('@@') ? 'dc' : undefined}>
          {l + '\n'}
        </span>
      ))}
    </pre>
  );
}

/**
 * Arrow keys move focus through a list's links (`[data-nav]`): Up/Down by one, Home/End to the ends.
 * Tab still leaves the list, as it should.
 */
export function onListKeys(e: KeyboardEvent): void {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
  const list = e.currentTarget as HTMLElement;
  const items = Array.from(list.querySelectorAll<HTMLElement>('[data-nav]'));
  if (!items.length) return;
  const at = items.indexOf(document.activeElement as HTMLElement);
  const next = e.key === 'Home' ? 0 : e.key === 'End' ? items.length - 1 : e.key === 'ArrowDown' ? Math.min(items.length - 1, at + 1) : Math.max(0, at - 1);
  items[next]?.focus();
  e.preventDefault();
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A fetch tied to a component: re-runs when `deps` change, keeps the last value while a refetch runs. */
export function useFetch<T>(fn: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean } {
  const [state, set] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  useEffect(() => {
    let live = true;
    set((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && set({ data, error: null, loading: false }),
      (error) => live && set((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

/**
 * The one way a view acts on the server: `run(fn, doing)` is busy (saying what it is doing) until `fn`
 * settles, clears the last error first, keeps what `fn` threw as `error`, and answers whether `fn`
 * succeeded (for a view that does more after a failure: select the password, close a confirm).
 */
export function useAction(): {
  busy: boolean;
  doing: string;
  error: unknown;
  setError: (error: unknown) => void;
  run: (fn: () => Promise<unknown>, doing?: string) => Promise<boolean>;
} {
  const [doing, setDoing] = useState('');
  const [error, setError] = useState<unknown>(null);
  const run = async (fn: () => Promise<unknown>, what = 'busy'): Promise<boolean> => {
    setDoing(what);
    setError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setDoing('');
    }
  };
  return { busy: doing !== '', doing, error, setError, run };
}

/** `1 scenario`, `2 scenarios`; `plural(n, 'reply', 'replies')` for the irregular ones. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** An outcome's shape (✓ pass, ✕ fail, ! error), so it reads without its colour. Inline SVG: every font. */
export function OutcomeMark({ outcome }: { outcome: string }) {
  return (
    <svg class="mark" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      {outcome === 'pass' ? (
        <path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round" />
      ) : outcome === 'fail' ? (
        <path d="M4 4l8 8M12 4l-8 8" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" />
      ) : (
        <path d="M8 2.5v7M8 12.5v1" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" />
      )}
    </svg>
  );
}

/** A folder, drawn (an emoji renders as an empty box where no emoji font is installed). */
export function FolderIcon() {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      <path d="M1.5 3.5h4.2l1.5 1.6h7.3v7.9h-13z" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linejoin="round" />
    </svg>
  );
}

/** A padlock, drawn for the same reason. */
export function LockIcon() {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="13" height="13" aria-hidden="true">
      <rect x="3" y="7" width="10" height="7.5" rx="1.5" fill="currentColor" />
      <path d="M5.2 7V5a2.8 2.8 0 015.6 0v2" fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}
