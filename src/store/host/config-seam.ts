import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { CONFIG_FILE } from '../config.js';
import { isCode } from '../git/refs.js';

/**
 * The gateway's config seam: the raw committed `trellis.json` of a project, revision-checked. It never
 * reads `trellis.local.json`, so nothing only that file holds can reach a response.
 */
export interface RawConfig {
  /** The file's text, or `{}` when it is absent. */
  readonly text: string;
  /** sha256 of the bytes, or `absent`. */
  readonly revision: string;
}

export function readRawConfig(root: string): RawConfig {
  try {
    const bytes = readFileSync(join(root, CONFIG_FILE));
    return { text: bytes.toString('utf8'), revision: createHash('sha256').update(bytes).digest('hex').slice(0, 32) };
  } catch (err) {
    if (isCode(err, 'ENOENT')) return { text: '{}', revision: 'absent' };
    throw err;
  }
}

const locks = new Map<string, Promise<unknown>>();

/** Runs writes of one project's config one at a time, so two writers holding one revision never both win. */
function withLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(root) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => {});
  locks.set(root, tail);
  void tail.then(() => locks.get(root) === tail && locks.delete(root));
  return next;
}

export type WriteOutcome = { readonly ok: true; readonly revision: string } | { readonly ok: false; readonly current: string };

/**
 * Replaces trellis.json with `next` (an object) if its revision is still `expected`; otherwise leaves
 * the file's bytes untouched and reports the current revision.
 */
export function writeRawConfig(root: string, expected: string, next: (current: Record<string, unknown>) => Record<string, unknown>): Promise<WriteOutcome> {
  return withLock(root, async () => {
    const now = readRawConfig(root);
    if (now.revision !== expected) return { ok: false, current: now.revision };
    let current: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(now.text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) current = parsed as Record<string, unknown>;
    } catch {
      // An unparsable file is replaced whole by a PUT; a field update starts from {}.
    }
    await writeFileAtomic(join(root, CONFIG_FILE), `${JSON.stringify(next(current), null, 2)}\n`);
    return { ok: true, revision: readRawConfig(root).revision };
  });
}

/** The identity projection of a project's trellis.json: its display name and icon. */
export function projectIdentity(root: string, fallbackName: string): { name: string; icon: string | null } {
  try {
    const raw: unknown = JSON.parse(readRawConfig(root).text);
    const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
    return { name: typeof r.name === 'string' && r.name.trim() ? r.name : fallbackName, icon: typeof r.icon === 'string' ? r.icon : null };
  } catch {
    return { name: fallbackName, icon: null };
  }
}
