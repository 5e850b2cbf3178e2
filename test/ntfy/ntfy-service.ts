import { randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An ntfy server stand-in on loopback, in the shape of ntfy's publish API as its docs give it
 * (docs.ntfy.sh/publish, "Updating + deleting notifications", ntfy 2.16+): a message is POSTed (or PUT)
 * as text to `/<topic>`, its title, click URL, tags and action buttons in headers (`Title`, `Click`,
 * `Tags`, `Actions`; a non-ASCII value RFC 2047 encoded); a **sequence id**, given as the
 * `X-Sequence-ID` header (aliases `Sequence-ID`, `SID`) or as the path `/<topic>/<sequence_id>`, makes a
 * message with the same id *replace* the notification shown before instead of adding one. It answers
 * the message as JSON (`id`, `time`, `event: "message"`, `topic`, `message`, `title`, `sequence_id`),
 * as ntfy does. `shown(topic)` is what a subscribed phone shows: one notification per sequence id, the
 * latest message's.
 */
export interface NtfyMessage {
  readonly id: string;
  readonly topic: string;
  /** The sequence id the message named, else its own id (ntfy's rule: a message is its own sequence). */
  readonly sequenceId: string;
  readonly message: string;
  readonly title: string | undefined;
  readonly click: string | undefined;
  readonly tags: string | undefined;
  /** The `Actions` header, decoded. */
  readonly actions: string | undefined;
  readonly headers: IncomingHttpHeaders;
}

export interface NtfyService {
  readonly url: string;
  /** Every message published, in order. */
  readonly messages: NtfyMessage[];
  /** What a subscribed phone shows on `topic`: the latest message of each sequence, oldest sequence first. */
  shown(topic: string): NtfyMessage[];
  close(): Promise<void>;
}

/** A header as ntfy reads it: RFC 2047 `=?UTF-8?B?…?=` decoded, anything else as is. */
const decoded = (v: string | string[] | undefined): string | undefined => {
  const s = Array.isArray(v) ? v.join(', ') : v;
  const m = s && /^=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=$/i.exec(s);
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : s;
};

/** ntfy's own limit on a sequence id (and a topic): letters, digits, `-` and `_`, at most 64. */
const ID_RE = /^[-_A-Za-z0-9]{1,64}$/;

export async function startNtfyService(): Promise<NtfyService> {
  const messages: NtfyMessage[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const [topic, pathSequence, ...rest] = new URL(req.url ?? '/', 'http://x').pathname.split('/').filter(Boolean);
      const given = pathSequence ?? decoded(req.headers['x-sequence-id'] ?? req.headers['sequence-id'] ?? req.headers.sid);
      const fail = (status: number, error: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code: status * 100, http: status, error }));
      if (req.method !== 'POST' && req.method !== 'PUT') return fail(405, 'method not allowed');
      if (!topic || !ID_RE.test(topic) || rest.length) return fail(404, 'page not found');
      if (given !== undefined && !ID_RE.test(given)) return fail(400, 'invalid sequence ID');
      const id = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
      const m: NtfyMessage = {
        id,
        topic,
        sequenceId: given ?? id,
        message: body || 'triggered',
        title: decoded(req.headers.title ?? req.headers['x-title']),
        click: decoded(req.headers.click ?? req.headers['x-click']),
        tags: decoded(req.headers.tags ?? req.headers['x-tags']),
        actions: decoded(req.headers.actions ?? req.headers['x-actions']),
        headers: req.headers,
      };
      messages.push(m);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id, time: Math.floor(Date.now() / 1000), event: 'message', topic, message: m.message, ...(m.title ? { title: m.title } : {}), sequence_id: m.sequenceId }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    shown(topic) {
      const latest = new Map<string, NtfyMessage>();
      for (const m of messages) if (m.topic === topic) latest.set(m.sequenceId, m);
      return [...latest.values()];
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
