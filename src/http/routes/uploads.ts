import { Hono } from 'hono';
import { TrellisError } from '../../events/index.js';
import { storeUpload, uploadLimit } from '../../store/evidence/uploads.js';
import type { AppContext } from '../context.js';
import { bodyChunks, drainRequest, webChunks } from '../body-limit.js';
import { route } from '../route-table.js';
import { errorBody, statusOf } from '../errors.js';

/** Room for multipart's boundaries and part headers around the file itself. */
const MULTIPART_OVERHEAD = 64 << 10;

/** Reads a whole body, refusing (413) past `max` bytes without reading further. */
async function readBounded(body: AsyncIterable<Uint8Array>, max: number, tooLarge: () => Error): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw tooLarge();
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** POST /api/uploads: a pasted file, as the raw body with `X-Filename` or as multipart (part `file`), kept under /tmp. */
export function uploadRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  route(app, 'shell', 'POST', '/api/uploads', async (c) => {
    const maxBytes = uploadLimit(ctx.project.root);
    const tooLarge = () => new TrellisError('PAYLOAD_TOO_LARGE', `uploads are limited to ${maxBytes} bytes (uploads.maxBytes in trellis.json)`);
    const contentType = c.req.header('content-type') ?? '';
    const multipart = contentType.startsWith('multipart/form-data');
    try {
      const declared = Number(c.req.header('content-length'));
      if (Number.isFinite(declared) && declared > maxBytes + (multipart ? MULTIPART_OVERHEAD : 0)) throw tooLarge();
      if (multipart) {
        const bytes = await readBounded(bodyChunks(c), maxBytes + MULTIPART_OVERHEAD, tooLarge);
        let form: FormData;
        try {
          form = await new Request('http://upload/', { method: 'POST', headers: { 'content-type': contentType }, body: bytes }).formData();
        } catch {
          throw new TrellisError('INVALID_INPUT', 'the multipart body does not parse');
        }
        const file = form.get('file');
        if (!(file instanceof Blob) || !('name' in file)) throw new TrellisError('INVALID_INPUT', 'a multipart upload carries the file in a part named "file"');
        if (file.size > maxBytes) throw tooLarge();
        return c.json(await storeUpload(webChunks(file.stream()), String(file.name), { maxBytes }), 201);
      }
      const raw = c.req.header('x-filename');
      if (raw === undefined) throw new TrellisError('INVALID_INPUT', 'a raw upload names its file in X-Filename (percent-encoded for non-ASCII names)');
      let name: string;
      try {
        name = decodeURIComponent(raw);
      } catch {
        throw new TrellisError('INVALID_INPUT', 'X-Filename is not valid percent-encoding');
      }
      return c.json(await storeUpload(bodyChunks(c), name, { maxBytes }), 201);
    } catch (err) {
      // The rest of the body is read and dropped before the answer, so the close after it is clean.
      if (err instanceof TrellisError && err.code === 'PAYLOAD_TOO_LARGE') {
        await drainRequest(c);
        return c.json(errorBody(err.code, err.message), statusOf(err.code), { Connection: 'close' });
      }
      throw err;
    }
  });
  return app;
}
