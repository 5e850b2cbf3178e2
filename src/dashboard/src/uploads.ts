import { post } from './api';

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
export function uploadFile(file: File): Promise<Upload> {
  return post<Upload>('api/uploads', file, true, { 'X-Filename': encodeURIComponent(file.name) });
}

/** A path as one shell word: left bare when it is plain, single-quoted otherwise. */
export function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
