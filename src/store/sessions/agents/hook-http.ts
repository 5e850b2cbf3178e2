import type { IncomingMessage, ServerResponse } from 'node:http';

/** One hook signal as the hooks' shell program POSTs it. */
export interface HookRequest {
  readonly event: string;
  /** The hook's JSON payload, as text. */
  readonly text: string;
  /** The hook's TMUX and TMUX_PANE (its `X-Trellis-Tmux` and `X-Trellis-Pane` headers). */
  readonly env: { readonly TMUX?: string; readonly TMUX_PANE?: string };
}

/**
 * The HTTP side of the hooks' shell program (hook-program.ts), the same for both its recorders: a session's
 * screen watcher (src/cli/hook-recorder.ts) and a confined session's outer relay (confine-relay.ts).
 * `POST /signal/<id>/<event>` with the hook's JSON as its body; `record` records it (for the recorder's own
 * session, whatever id the path names) and resolves with the hook's exit status, having said on `say` what
 * the hook says on stderr. The answer: 200 for 0, 422 otherwise, its body what was said; 404 for anything
 * else (another method or path, an event that is no event name). No node:http is loaded here: each
 * recorder makes its own server.
 */
export function hookSignalListener(who: string, record: (req: HookRequest, say: (line: string) => void) => Promise<number>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {});
    req.on('end', () => {
      const answer = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const event = eventOf(req.url ?? '');
      if (req.method !== 'POST' || event === null) return answer(404, `trellis: ${who} takes POST /signal/<id>/<event> only\n`);
      const header = (name: string) => {
        const v = req.headers[name];
        return typeof v === 'string' && v !== '' ? v : undefined;
      };
      const said: string[] = [];
      const env = { TMUX: header('x-trellis-tmux'), TMUX_PANE: header('x-trellis-pane') };
      void record({ event, text: Buffer.concat(chunks).toString('utf8'), env }, (line) => said.push(line)).then(
        (code) => answer(code === 0 ? 200 : 422, said.join('')),
        (e: unknown) => answer(422, `${said.join('')}trellis: internal error: ${(e as Error).message}\n`),
      );
    });
  };
}

/** The event a `/signal/<id>/<event>` path names, or null (another path, or no event name). */
function eventOf(url: string): string | null {
  const m = /^\/signal\/[^/]+\/([^/?]+)$/.exec(url);
  if (!m) return null;
  try {
    const event = decodeURIComponent(m[1]!);
    return /^[\w.-]{1,64}$/.test(event) ? event : null;
  } catch {
    return null;
  }
}
