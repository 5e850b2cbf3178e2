import WebSocket from 'ws';

/** A pane viewer over a real WebSocket: collects binary frames (after the first snapshot) and JSON messages. */
export interface TestViewer {
  readonly ws: WebSocket;
  readonly messages: Array<Record<string, unknown>>;
  /** Every binary frame's bytes, in order (the snapshot's included). */
  bytes(): Buffer;
  /** Resolves once the bytes received satisfy `test` (bounded). */
  until(test: (bytes: Buffer) => boolean, what: string, ms?: number): Promise<Buffer>;
  /** Resolves with the first JSON message matching `test`. */
  message(test: (m: Record<string, unknown>) => boolean, what: string, ms?: number): Promise<Record<string, unknown>>;
  readonly closed: Promise<{ code: number; reason: string }>;
  input(data: string): void;
}

export async function openViewer(url: string): Promise<TestViewer> {
  const ws = new WebSocket(url);
  const chunks: Buffer[] = [];
  let size = 0;
  const messages: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  const poke = () => waiters.forEach((w) => w());
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      const b = data as Buffer;
      chunks.push(b);
      size += b.length;
    } else messages.push(JSON.parse(String(data)));
    poke();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => (resolve({ code, reason: String(reason) }), poke())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  let joined: Buffer | null = null;
  const bytes = () => {
    if (!joined || joined.length !== size) joined = Buffer.concat(chunks);
    return joined;
  };
  const wait = <T>(check: () => T | undefined, what: string, ms: number) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => (waiters.delete(test), reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(bytes().toString('latin1').slice(-400))} and ${JSON.stringify(messages).slice(-400)}`))), ms);
      const test = () => {
        const v = check();
        if (v !== undefined) {
          clearTimeout(timer);
          waiters.delete(test);
          resolve(v);
        }
      };
      waiters.add(test);
      test();
    });
  return {
    ws,
    messages,
    bytes,
    until: (test, what, ms = 10_000) => wait(() => (test(bytes()) ? bytes() : undefined), what, ms),
    message: (test, what, ms = 10_000) => wait(() => messages.find(test), what, ms),
    closed,
    input: (data) => ws.send(JSON.stringify({ type: 'input', data })),
  };
}
