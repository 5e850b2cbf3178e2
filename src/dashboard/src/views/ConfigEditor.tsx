import { useEffect, useState } from 'preact/hooks';
import { enc } from '../api';
import { ErrorBox, useAction } from '../ui';
import { errorOf, hub } from '../host/hub';

interface Base {
  readonly text: string;
  readonly etag: string;
}

/**
 * The project's committed `trellis.json`, edited against the revision it was read at (`If-Match`). When
 * the file changed meanwhile the gateway answers 412 and keeps the file: the editor shows both versions
 * and keeps the person's text; nothing is overwritten unless they pick a side and save again.
 */
export function ConfigEditor({ id }: { id: string }) {
  const [base, setBase] = useState<Base | null>(null);
  const [draft, setDraft] = useState('');
  const [conflict, setConflict] = useState<Base | null>(null);
  const { busy, error, setError, run } = useAction();
  const [saved, setSaved] = useState<string | null>(null);

  const read = async (): Promise<Base> => {
    const a = await hub('GET', `projects/${enc(id)}/config`);
    if (a.status !== 200 || !a.etag) throw errorOf(a, 'reading trellis.json');
    return { text: a.text, etag: a.etag };
  };
  const load = async () => {
    setError(null);
    try {
      const b = await read();
      setBase(b);
      setDraft(b.text);
      setConflict(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [id]);

  const save = async (e: Event) => {
    e.preventDefault();
    if (!base) return;
    setSaved(null);
    setError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(draft);
    } catch (err) {
      return setError({ code: 'INVALID_JSON', message: `trellis.json must be JSON: ${(err as Error).message}` });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return setError({ code: 'INVALID_INPUT', message: 'trellis.json must hold a JSON object' });
    await run(async () => {
      const a = await hub<{ revision?: string }>('PUT', `projects/${enc(id)}/config`, draft, { 'If-Match': base.etag });
      if (a.status === 200 && a.etag) {
        const now = await read().catch(() => ({ text: draft, etag: a.etag! }));
        setBase(now);
        setDraft(now.text);
        setConflict(null);
        setSaved(`Saved (revision ${a.body.revision ?? a.etag}).`);
      } else if (a.status === 412) {
        setConflict(await read());
      } else throw errorOf(a, 'saving trellis.json');
    });
  };

  return (
    <section class="card" aria-labelledby="config-h">
      <h2 id="config-h">
        <code>trellis.json</code>
      </h2>
      <p class="muted">The committed configuration of this project (trellis.local.json is never shown here). Saving replaces the file atomically.</p>
      {base ? (
        <form onSubmit={save} class="stack">
          <label>
            <span>Contents</span>
            <textarea class="code-edit" rows={Math.min(24, Math.max(6, draft.split('\n').length + 1))} spellcheck={false} value={draft} onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)} data-testid="config-text" />
          </label>
          {conflict ? (
            <div class="error conflict" role="alert" data-testid="config-conflict">
              <strong>Not saved: trellis.json changed since you opened it.</strong>
              <div>Someone (the CLI, an editor, another page) wrote it meanwhile. Your text is kept above; the version on disk now is:</div>
              <pre tabIndex={0} aria-label="trellis.json on disk now">
                {conflict.text}
              </pre>
              <div class="actions">
                <button
                  class="button"
                  type="button"
                  onClick={() => {
                    setBase(conflict);
                    setDraft(conflict.text);
                    setConflict(null);
                  }}
                >
                  Use the version on disk (drop my edit)
                </button>
                <button
                  class="button"
                  type="button"
                  onClick={() => {
                    setBase(conflict);
                    setConflict(null);
                  }}
                >
                  Keep my edit over it (then Save)
                </button>
              </div>
            </div>
          ) : null}
          <div class="actions">
            <button class="button primary" type="submit" disabled={busy || !!conflict || draft === base.text}>
              {busy ? 'Saving…' : 'Save'}
            </button>
            <button class="button quiet" type="button" onClick={() => void load()} disabled={busy}>
              Reload from disk
            </button>
            {saved ? (
              <span role="status" class="ok">
                {saved}
              </span>
            ) : null}
          </div>
        </form>
      ) : (
        <p class="muted">Reading…</p>
      )}
      <ErrorBox error={error} />
    </section>
  );
}
