import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { Readable } from 'node:stream';
import { TrellisError } from '../../events/index.js';
import { isEvidenceHash } from '../../store/evidence/evidence.js';
import type { AppContext } from '../context.js';
import { limitBody } from '../body-limit.js';
import { route } from '../route-table.js';
import { errorBody, statusOf } from '../errors.js';

/** Largest evidence upload (a screenshot or a short recording). */
export const EVIDENCE_LIMIT_BYTES = 32 << 20;

/** Content-addressed evidence: POST bytes, GET them back whole or by one Range. */
export function evidenceRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const store = ctx.project.evidence;

  route(app, 'data', 'POST', '/api/evidence',
    limitBody(EVIDENCE_LIMIT_BYTES, 'evidence uploads'),
    async (c) => {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      if (bytes.length === 0) throw new TrellisError('INVALID_INPUT', 'POST /api/evidence needs the bytes as the request body');
      return c.json(await store.put(bytes), 201);
    },
  );

  route(app, 'read', 'GET', '/api/evidence/:hash', (c) => {
    const hash = c.req.param('hash');
    if (!isEvidenceHash(hash)) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${hash}`);
    const size = store.size(hash);
    if (size === null) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${hash}`);
    const etag = `"${hash}"`;
    const common = { ETag: etag, 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream', 'Cache-Control': 'public, max-age=31536000, immutable' };
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
