import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { errorBody, statusOf } from './errors.js';

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
 *
 * The body is read from the Node request itself, never through the web stream `c.req.raw.body` (which
 * the Node adapter builds with `Readable.toWeb` on first use): a refused body's bytes are counted and
 * dropped as they arrive, so they cannot pile up (read through the web stream, each refused 100 MB body
 * left about 64 MB the process never gave back).
 */
export function limitBody(maxSize: number, what = 'request bodies'): MiddlewareHandler {
  return async (c, next) => {
    const incoming = nodeRequest(c);
    const declared = c.req.header('content-length');
    const chunked = c.req.header('transfer-encoding') !== undefined;
    if (!chunked && declared !== undefined && Number(declared) > maxSize) return refuse(c, maxSize, what);
    if (!chunked || c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    // No length declared (chunked): count as it arrives, keep what fits, and hand the route a copy.
    const body = incoming ? await readUpTo(incoming, maxSize) : await readWebUpTo(c.req.raw.body, maxSize);
    if (body === null) return refuse(c, maxSize, what);
    c.req.raw = new Request(c.req.url, { method: c.req.method, headers: c.req.raw.headers, body });
    return next();
  };
}

/** The 413 for a body over `maxSize`, sent once the rest of the body has been read and dropped (bounded). */
export async function refuse(c: Context, maxSize: number, what: string): Promise<Response> {
  await drainRequest(c);
  return c.json(errorBody('PAYLOAD_TOO_LARGE', `${what} are limited to ${maxSize} bytes`), statusOf('PAYLOAD_TOO_LARGE'), { Connection: 'close' });
}

/** Reads the rest of a refused body and drops it (bounded), so the answer that follows is not reset. */
export async function drainRequest(c: Context): Promise<void> {
  const incoming = nodeRequest(c);
  if (incoming) return drainNode(incoming);
  const body = c.req.raw.body;
  if (body && !body.locked) await drainWeb(body.getReader());
}

/** The Node request under a Hono context, when the app runs on @hono/node-server. */
function nodeRequest(c: Context): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** The whole body if it is at most `max` bytes, else null (the bytes read so far are dropped). */
function readUpTo(incoming: IncomingMessage, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = (out: Uint8Array<ArrayBuffer> | null) => {
      incoming.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
      if (out === null) incoming.pause();
      resolve(out);
    };
    const onData = (d: Buffer) => {
      size += d.length;
      if (size > max) return done(null);
      parts.push(d);
    };
    const onEnd = () => done(Buffer.concat(parts));
    const onError = () => done(null);
    incoming.on('data', onData).on('end', onEnd).on('error', onError).on('close', onError);
  });
}

/** readUpTo for an app run without Node's server (in-process requests): the body's web stream. */
async function readWebUpTo(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of webChunks(body)) {
    size += chunk.length;
    if (size > max) return null;
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** Counts and drops what is left of `incoming` until it ends, DRAIN_BYTES or DRAIN_MS, whichever is first. */
function drainNode(incoming: IncomingMessage): Promise<void> {
  if (incoming.readableEnded || incoming.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      incoming.off('data', onData).off('end', done).off('error', done).off('close', done);
      incoming.pause();
      resolve();
    };
    const onData = (d: Buffer) => {
      read += d.length;
      if (read >= DRAIN_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MS);
    timer.unref();
    incoming.on('data', onData).on('end', done).on('error', done).on('close', done);
    incoming.resume();
  });
}

/**
 * The request body's chunks as they arrive, read from the Node request (see limitBody for why not the
 * web stream). Stopping early leaves the rest unread and the stream paused, so a 413 can drain it.
 */
export async function* bodyChunks(c: Context): AsyncIterable<Uint8Array> {
  const incoming = nodeRequest(c);
  if (!incoming) return yield* webChunks(c.req.raw.body);
  for (;;) {
    const chunk = incoming.read() as Buffer | null;
    if (chunk !== null) {
      yield chunk;
      continue;
    }
    if (incoming.readableEnded) return;
    if (incoming.destroyed) throw new Error('the client went away mid-body');
    await new Promise<void>((resolve) => {
      const wake = () => {
        incoming.off('readable', wake).off('end', wake).off('close', wake).off('error', wake);
        resolve();
      };
      incoming.on('readable', wake).on('end', wake).on('close', wake).on('error', wake);
    });
  }
}

/** A web stream's chunks; stopping early releases it without cancelling it. */
export async function* webChunks(body: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

async function drainWeb(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
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
