import { ApiError, apiUrl } from './api';

/** What POST /api/uploads answers: where the file now is on the machine the agent runs on. */
export interface Upload {
  readonly path: string;
  readonly size: number;
  readonly hash: string;
}

/**
 * Uploads one file as the raw body with its name in `X-Filename` (percent-encoded, so any name travels);
 * never retried, like every write. A refusal (a name with a path in it, an empty file, over the size
 * limit) comes back as the server's own message.
 */
export async function uploadFile(file: File): Promise<Upload> {
  let res: Response;
  try {
    res = await fetch(apiUrl('api/uploads'), { method: 'POST', headers: { 'Content-Type': 'application/octet-stream', 'X-Filename': encodeURIComponent(file.name) }, body: file });
  } catch (err) {
    throw new ApiError('NETWORK', `the backend did not answer the upload of ${file.name}: ${(err as Error).message}`, 0);
  }
  const body = (await res.json().catch(() => null)) as (Upload & { error?: { code?: string; message?: string } }) | null;
  if (!res.ok) throw new ApiError(body?.error?.code ?? `HTTP_${res.status}`, body?.error?.message ?? `the upload of ${file.name} answered ${res.status}`, res.status);
  return body!;
}

/** A path as one shell word: left bare when it is plain, single-quoted otherwise. */
export function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
