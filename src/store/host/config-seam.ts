import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { TrellisError } from '../../events/index.js';
import { CONFIG_FILE } from '../project/config.js';
import { isCode } from '../fs-errors.js';
import { serially } from './write-queue.js';

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

export type WriteOutcome = { readonly ok: true; readonly revision: string } | { readonly ok: false; readonly current: string };

/**
 * Replaces trellis.json with `next` (an object) if its revision is still `expected`; otherwise leaves
 * the file's bytes untouched and reports the current revision.
 */
export function writeRawConfig(root: string, expected: string, next: (current: Record<string, unknown>) => Record<string, unknown>): Promise<WriteOutcome> {
  // One write of the file at a time (write-queue.ts), so two writers holding one revision never both win.
  return serially(join(root, CONFIG_FILE), async () => {
    const now = readRawConfig(root);
    if (now.revision !== expected) return { ok: false, current: now.revision };
    let current: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(now.text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) current = parsed as Record<string, unknown>;
    } catch {
      // An unparsable file is replaced whole by a PUT; a field update starts from {}.
    }
    await writeAtomic(join(root, CONFIG_FILE), configText(next(current)));
    return { ok: true, revision: readRawConfig(root).revision };
  });
}

/** A trellis.json nests a few levels (`uploads.maxBytes`, a forge's settings); far deeper is not a config. */
export const MAX_CONFIG_DEPTH = 32;
/** The largest trellis.json the seam writes. */
export const MAX_CONFIG_BYTES = 256 << 10;

/**
 * The text written for a config, checked before anything is written: JSON nested thousands deep
 * overflows the stack of JSON.stringify (a 500), and pretty-printing indents every level, so an 8 KB
 * request of nested arrays came out as a 32 MB file. Depth is measured without recursion.
 */
export function configText(config: Record<string, unknown>): string {
  const stack: { value: unknown; depth: number }[] = [{ value: config, depth: 1 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_CONFIG_DEPTH) throw new TrellisError('INVALID_INPUT', `trellis.json may nest at most ${MAX_CONFIG_DEPTH} levels deep`);
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  const text = `${JSON.stringify(config, null, 2)}\n`;
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) throw new TrellisError('INVALID_INPUT', `trellis.json may be at most ${MAX_CONFIG_BYTES} bytes written out; this one is ${Buffer.byteLength(text)}`);
  return text;
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
