import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { Readable } from 'node:stream';
import { TrellisError } from '../../events/index.js';
import { evidenceMeta, isEvidenceHash, type EvidenceMeta } from '../../store/evidence/evidence.js';
import type { AppContext } from '../context.js';
import { limitBody } from '../body-limit.js';
import { route } from '../route-table.js';
import { errorBody, statusOf } from '../errors.js';

/** Largest evidence upload (a screenshot or a short recording). */
export const EVIDENCE_LIMIT_BYTES = 32 << 20;

/**
 * Types a browser may show from this origin as they are: inert images, plain text, audio and video. Any
 * other recorded type (HTML, SVG, a script) is served as `application/octet-stream` and as an attachment,
 * whatever its uploader said.
 */
const SHOWN_AS_IS = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'text/plain', 'video/mp4', 'video/webm', 'audio/mpeg', 'audio/ogg', 'audio/wav']);

/** The headers that keep a file's name and type: its type if inert, `inline` then, else `attachment`; the name as RFC 6266 says. */
export function servedAs(meta: EvidenceMeta | null): Record<string, string> {
  if (!meta) return { 'Content-Type': 'application/octet-stream' };
  const shown = SHOWN_AS_IS.has(meta.type);
  const ascii = meta.name.replace(/[^\x20-\x7e]|[\\"%]/g, '_');
  return {
    'Content-Type': shown ? (meta.type === 'text/plain' ? 'text/plain; charset=utf-8' : meta.type) : 'application/octet-stream',
    // The type as its uploader said, even when it is not served as that (a page shows it beside the name).
    'X-Evidence-Type': meta.type,
    'Content-Disposition': `${shown ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(meta.name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
  };
}

/**
 * Content-addressed evidence: POST bytes (named by `X-Filename`, percent-encoded, with their
 * `Content-Type`: both kept beside the bytes), GET them back whole or by one Range, with the name and type.
 */
export function evidenceRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const store = ctx.project.evidence;

  route(app, 'data', 'POST', '/api/evidence',
    limitBody(EVIDENCE_LIMIT_BYTES, 'evidence uploads'),
    async (c) => {
      const raw = c.req.header('X-Filename');
      let name: string | undefined;
      try {
        name = raw === undefined ? undefined : decodeURIComponent(raw);
      } catch {
        throw new TrellisError('INVALID_INPUT', 'X-Filename is not valid percent-encoding');
      }
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      if (bytes.length === 0) throw new TrellisError('INVALID_INPUT', 'POST /api/evidence needs the bytes as the request body');
      return c.json(await store.put(bytes, evidenceMeta(name, c.req.header('Content-Type'))), 201);
    },
  );

  route(app, 'read', 'GET', '/api/evidence/:hash', (c) => {
    const hash = c.req.param('hash');
    if (!isEvidenceHash(hash)) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${hash}`);
    const size = store.size(hash);
    if (size === null) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${hash}`);
    const etag = `"${hash}"`;
    const common = { ETag: etag, 'Accept-Ranges': 'bytes', ...servedAs(store.meta(hash)), 'Cache-Control': 'public, max-age=31536000, immutable' };
    if (c.req.header('If-None-Match') === etag) return c.body(null, 304, { ETag: etag });
    const range = parseRange(c.req.header('Range'), size);
    if (range === 'unsatisfiable') {
      return c.json(errorBody('RANGE_NOT_SATISFIABLE', `the evidence is ${size} bytes`), statusOf('RANGE_NOT_SATISFIABLE'), { 'Content-Range': `bytes */${size}` });
    }
    const { stream: file } = store.open(hash, range ?? undefined);
    const length = range ? range.end - range.start + 1 : size;
    for (const [k, v] of Object.entries({ ...common, 'Content-Length': String(length), ...(range ? { 'Content-Range': `bytes ${range.start}-${range.end}/${size}` } : {}) })) {
      c.header(k, v);
    }
    c.status(range ? 206 : 200);
    return stream(c, async (s) => {
      s.onAbort(() => {
        file.destroy();
      });
      for await (const chunk of Readable.from(file)) await s.write(chunk as Uint8Array);
    });
  });
  return app;
}

/**
 * One `bytes=` range (RFC 9110 §14.1.2): `a-b`, `a-`, or the suffix `-n`. Multiple ranges and other
 * units are ignored (the whole body is served), as the RFC allows.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
