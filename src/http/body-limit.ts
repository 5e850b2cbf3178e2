import type { Context, MiddlewareHandler } from 'hono';
import { errorBody } from './errors.js';

/**
 * How much of a refused body is read and thrown away before the 413 goes out, and for how long. Past
 * either, the answer is sent and the connection closed anyway (a client that keeps sending after this
 * is not one whose answer we owe).
 */
const DRAIN_BYTES = 64 << 20;
const DRAIN_MS = 10_000;

/**
 * Refuses a request body over `maxSize` with a 413 JSON answer that reaches the client whole. Hono's own
 * bodyLimit answers while the body is still arriving and the connection is closed under it: the kernel
 * meets the unread bytes with a reset, which destroys the answer on its way (a reset instead of a 413,
 * 15% directly and most of the time through the supervisor's proxy) and leaves the server writing to a
 * destroyed stream (ERR_STREAM_DESTROYED). Here the rest of the body is read and discarded first, then
 * the 413 is sent with `Connection: close`, so the close is clean.
 */
export function limitBody(maxSize: number, what = 'request bodies'): MiddlewareHandler {
  const refuse = async (c: Context, reader?: ReadableStreamDefaultReader<Uint8Array>) => {
    await drain(reader ?? c.req.raw.body?.getReader());
    return c.json(errorBody('PAYLOAD_TOO_LARGE', `${what} are limited to ${maxSize} bytes`), 413, { Connection: 'close' });
  };
  return async (c, next) => {
    const body = c.req.raw.body;
    if (!body) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined) return Number(declared) > maxSize ? refuse(c) : next();
    // No length declared (chunked): count as it arrives, keep what fits, and hand the route a copy.
    const reader = body.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxSize) return refuse(c, reader);
      parts.push(value);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(parts) });
    return next();
  };
}

/** Reads the rest of a refused body and drops it (bounded), so the answer that follows is not reset. */
export async function drainBody(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body && !body.locked) await drain(body.getReader());
}

async function drain(reader: ReadableStreamDefaultReader<Uint8Array> | undefined): Promise<void> {
  if (!reader) return;
  const deadline = Date.now() + DRAIN_MS;
  let read = 0;
  const timeout = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), DRAIN_MS).unref());
  try {
    while (read < DRAIN_BYTES && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === 'late' || next.done) return;
      read += next.value.length;
    }
  } catch {
    // the client went away mid-body: nobody is left to answer
  }
}
