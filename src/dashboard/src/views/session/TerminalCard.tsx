import { useEffect, useRef, useState } from 'preact/hooks';
import { apiUrl, enc, post } from '../../api';
import { paneClosedWords, wordsFor } from '../../error-words';
import { shellWord, uploadFile } from '../../uploads';
import { ErrorBox, useAction } from '../../ui';
import type { PaneLinkState, PaneTerminal } from '../../xterm-terminal';

/** Keys the raw-key buttons send (names from the server's allowlist), with what they are called here. */
const RAW_KEYS: readonly [string, string][] = [
  ['Escape', 'Esc'],
  ['C-c', 'Ctrl-C'],
  ['C-d', 'Ctrl-D'],
  ['Tab', 'Tab'],
  ['Up', '↑'],
  ['Down', '↓'],
  ['Enter', 'Enter'],
];

/** The terminal card: link state, read-only toggle, file paste, the xterm itself (lazy), raw keys. */
export function TerminalCard({ id, viewOnly = false }: { id: string; viewOnly?: boolean }) {
  const frame = useRef<HTMLDivElement>(null);
  const [term, setTerm] = useState<PaneTerminal | null>(null);
  const [loadErr, setLoadErr] = useState<unknown>(null);
  // viewOnly: this login may watch the pane but not type into it (the gateway refuses the input socket).
  const [readOnly, setReadOnly] = useState(viewOnly);
  const { doing: busy, error: err, setError: setErr, run } = useAction();
  const [typed, setTyped] = useState('');
  const termRef = useRef<PaneTerminal | null>(null);

  /** Uploads each file and types its path (shell-quoted) into the pane, like a paste would. */
  const paste = async (files: File[]) => {
    setTyped('');
    for (const file of files) {
      const ok = await run(async () => {
        const up = await uploadFile(file);
        const t = termRef.current;
        if (!t || !t.type(`${shellWord(up.path)} `)) {
          // Said in the page's words (error-words.ts) from its facts: which file, and why it was not typed.
          throw Object.assign(new Error(`uploaded to ${up.path}, but nothing was typed`), { code: t?.state.value === 'live' ? 'READ_ONLY' : 'PANE_NOT_LIVE', details: { file: file.name } });
        }
        setTyped(up.path);
        t.focus();
      }, `Uploading ${file.name}…`);
      if (!ok) break;
    }
  };

  useEffect(() => {
    let live = true;
    let made: PaneTerminal | null = null;
    import('../../xterm-terminal').then(
      ({ PaneTerminal }) => {
        if (!live || !frame.current) return;
        made = new PaneTerminal(frame.current, { url: apiUrl(`api/sessions/${enc(id)}/socket`), readOnly: viewOnly, onFiles: (f) => void (viewOnly || paste(f)) }).start();
        termRef.current = made;
        setTerm(made);
        // The terminal takes the keyboard when it arrives (it loads lazily), unless a field already has it:
        // the answer box a notification opened the page to, or whatever the person is typing in.
        const active = document.activeElement;
        if (!active || active === document.body) made.focus();
      },
      (e) => live && setLoadErr(e),
    );
    return () => {
      live = false;
      made?.dispose();
      termRef.current = null;
    };
  }, [id]);

  const key = async (k: string) => {
    setErr(null);
    // Sending keys is typing: this viewer now drives the pane's size.
    termRef.current?.claim();
    try {
      await post(`api/sessions/${enc(id)}/rawkey`, { keys: [k] });
    } catch (e) {
      setErr(e);
    }
    termRef.current?.focus();
  };
  const state: PaneLinkState = term?.state.value ?? 'connecting';
  const n = term?.notice.value;
  const notice = !n ? null : 'closed' in n ? paneClosedWords(n.closed) : wordsFor({ ...n.refused, details: { viewOnly } }, 'terminal');
  return (
    <section class="card terminal-card" aria-labelledby="terminal-h">
      <div class="row-head terminal-head">
        <h2 id="terminal-h">Terminal</h2>
        <span class={`link pane-link link-${state === 'ended' ? 'ended' : state}`} role="status" data-testid="pane-state">
          <span class="dot" aria-hidden="true" />
          {state === 'reconnecting' ? 'reconnecting…' : state === 'connecting' ? 'connecting…' : state}
        </span>
        {term?.size.value ? (
          <span class="muted size">
            {term.size.value.cols}×{term.size.value.rows}
          </span>
        ) : null}
        {term?.scrolls.value ? (
          <span class="muted" data-testid="pane-scrolls" title="The terminal is wider than this screen at a readable size: scroll it sideways to see every column">
            ↔ scroll sideways
          </span>
        ) : null}
        {viewOnly ? <span class="muted">view only</span> : null}
        {viewOnly ? null : (
          <label class="check">
            <input
              type="checkbox"
              checked={readOnly}
              onChange={(e) => {
                const ro = (e.target as HTMLInputElement).checked;
                setReadOnly(ro);
                term?.setReadOnly(ro);
                // A refusal of the other mode (a paste into a read-only terminal) no longer holds.
                setErr(null);
              }}
            />{' '}
            Read-only
          </label>
        )}
        {viewOnly ? null : (
          <label class="button small file-paste">
            Paste a file
            <input
              type="file"
              multiple
              aria-label="Paste a file into the terminal (uploads it and types its path)"
              onChange={(e) => {
                const input = e.target as HTMLInputElement;
                const files = Array.from(input.files ?? []);
                input.value = '';
                if (files.length) void paste(files);
              }}
            />
          </label>
        )}
      </div>
      <ErrorBox error={loadErr} title="The terminal could not load" />
      <div class="terminal-frame" ref={frame} data-testid="terminal" />
      {notice ? (
        <p class="notice" role="status" data-testid="pane-notice">
          {notice.message}
          {notice.next ? ` ${notice.next}` : ''}
        </p>
      ) : null}
      {viewOnly ? null : (
        <div class="raw-keys" role="group" aria-label="Raw keys">
          <span class="muted">Keys:</span>
          {RAW_KEYS.map(([k, label]) => (
            <button key={k} class="button small" onClick={() => void key(k)} title={`send ${k} to the pane`} disabled={readOnly}>
              {label}
            </button>
          ))}
          {busy ? <span class="muted">{busy}</span> : null}
          {typed ? (
            <span class="muted" data-testid="typed-path">
              typed <code>{typed}</code>
            </span>
          ) : null}
        </div>
      )}
      <ErrorBox error={err} action="terminal" title="Not sent" />
    </section>
  );
}
