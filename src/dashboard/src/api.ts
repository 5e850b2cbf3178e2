import { signal } from '@preact/signals';

/**
 * The one HTTP client of a project's page: views never call fetch themselves (the host page's own routes
 * go through host/hub.ts; the live streams are live.ts's SSE and xterm-terminal.ts's WebSocket). The API lives next to the page: `/api/...` when the page is served at
 * `/` by `trellis serve`, `/p/<id>/api/...` when a gateway serves it at `/p/<id>/`. So the base is the
 * directory of the page's own path; the view lives in the URL fragment and never changes it.
 */
export const apiBase: string = location.pathname.replace(/[^/]*$/, '');

/**
 * An error the backend answered with (`{"error":{"code","message"}, ...details}`), or a network failure.
 * The message is the API's (written for the CLI and API users); the page says it in its own words from
 * the code and the details (error-words.ts).
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    /** Facts the answer carried beside `error` (a step's transcript, the checks that block a merge). */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/**
 * Who a write from this page is filed as: the server's answer (the login the gateway knows, else `human`; the
 * door's rule, http/author.ts), asked once per page load. The page offers Retract on that author's replies.
 */
export const pageAuthor = signal<string | null>(null);
let askedAuthor = false;
export function loadPageAuthor(): void {
  if (askedAuthor) return;
  askedAuthor = true;
  get<{ by: string }>('api/author').then(
    (r) => (pageAuthor.value = r.by),
    () => (askedAuthor = false),
  );
}

export const apiUrl = (path: string): string => apiBase + path.replace(/^\//, '');

/** Statuses a proxy or a restarting backend answers for a moment; a GET is retried on them. */
const TRANSIENT = new Set([502, 503, 504]);
const RETRIES = 4;

/**
 * GET with bounded exponential backoff on transient failures (a dropped connection, a 502/503/504 while
 * the backend reloads): 200, 400, 800, 1600 ms, then the error is shown.
 */
export async function getJson<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T | null; etag: string | null }> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(apiUrl(path), { ...init, headers: { Accept: 'application/json', ...(init.headers ?? {}) } });
    } catch (err) {
      if (attempt < RETRIES) {
        await delay(200 * 2 ** attempt);
        continue;
      }
      throw new ApiError('NETWORK', `the backend did not answer GET ${path}: ${(err as Error).message}`, 0);
    }
    if (TRANSIENT.has(res.status) && attempt < RETRIES && !(await isForgeError(res))) {
      await delay(200 * 2 ** attempt);
      continue;
    }
    if (res.status === 304) return { status: 304, body: null, etag: res.headers.get('ETag') };
    if (!res.ok) throw await errorOf(res, `GET ${path}`);
    return { status: res.status, body: (await res.json()) as T, etag: res.headers.get('ETag') };
  }
}

export async function get<T>(path: string): Promise<T> {
  return (await getJson<T>(path)).body as T;
}

/**
 * POST JSON (or raw bytes, with `headers` such as an upload's `X-Filename`); never retried, since a write
 * may have landed before the connection dropped.
 */
export async function post<T>(path: string, body: unknown, raw = false, headers: Record<string, string> = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(apiUrl(path), {
      method: 'POST',
      headers: { ...(raw ? { 'Content-Type': 'application/octet-stream' } : { 'Content-Type': 'application/json' }), ...headers },
      body: raw ? (body as Blob) : JSON.stringify(body ?? {}),
    });
  } catch (err) {
    throw new ApiError('NETWORK', `the backend did not answer POST ${path}: ${(err as Error).message}; check whether it landed before retrying`, 0);
  }
  if (!res.ok) throw await errorOf(res, `POST ${path}`);
  return (await res.json()) as T;
}

/**
 * The project's trellis.json cannot be used (the backend answered CONFIG_INVALID): every view shows it,
 * with the file, line and repair the message names, until an answer that needed the config succeeds.
 */
export const configError = signal<string | null>(null);

async function errorOf(res: Response, what: string): Promise<ApiError> {
  try {
    const { error, ...details } = (await res.json()) as { error?: { code?: string; message?: string } };
    if (error?.code === 'CONFIG_INVALID') configError.value = error.message ?? 'trellis.json cannot be read';
    if (error?.message) return new ApiError(error.code ?? 'ERROR', error.message, res.status, details);
  } catch {}
  return new ApiError('HTTP_' + res.status, `${what} answered ${res.status} ${res.statusText}`, res.status);
}

// A forge's own 502 carries a JSON error from our backend: that is an answer, not a transient failure.
async function isForgeError(res: Response): Promise<boolean> {
  return (res.headers.get('Content-Type') ?? '').includes('application/json');
}

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The first bytes of an evidence blob (a Range request): what came, and the blob's whole size if said. */
export async function evidenceHead(hash: string, bytes: number): Promise<{ status: number; bytes: Uint8Array; total: number | null; name: string | null; type: string | null }> {
  const res = await fetch(apiUrl(`api/evidence/${enc(hash)}`), { headers: { Range: `bytes=0-${bytes - 1}` } });
  if (!res.ok) return { status: res.status, bytes: new Uint8Array(0), total: null, name: null, type: null };
  const total = /\/(\d+)$/.exec(res.headers.get('Content-Range') ?? '')?.[1];
  // The name it was stored with (RFC 6266's filename*), when it was stored with one.
  const star = /filename\*=UTF-8''([^;]+)/i.exec(res.headers.get('Content-Disposition') ?? '')?.[1];
  let name: string | null = null;
  try {
    name = star ? decodeURIComponent(star) : null;
  } catch {}
  const type = res.headers.get('X-Evidence-Type');
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), total: total === undefined ? null : Number(total), name, type: name ? type : null };
}

/** A path segment for an id that may hold `/` or `#` (forge ids such as `github.com#12`). */
export const enc = encodeURIComponent;
