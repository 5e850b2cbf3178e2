/**
 * The relay's way in (issue 45): each server of a confined agent's that Trellis drives (opencode's), listened
 * on at the person's loopback by the outer relay and joined to the same port inside the sandbox through
 * `in/<port>.sock`, where the inner relay listens. That folder is the sandbox's to write (the inner relay
 * creates its sockets there), so the agent can put any host socket's path in a socket's place (a symlink),
 * which the outer relay, as the person, would follow. So the outer relay sends nothing to a peer before it
 * said this launch's greeting, which the inner relay says first on every connection: a host socket that
 * does not say it — another program's control socket, the relay's own — gets zero bytes, and Trellis's
 * client (its requests carry opencode's password) a 502 naming why. The greeting is written by the outer
 * relay into `in/` before the sandbox starts, and read and removed by the inner relay before the agent
 * starts, so the agent never sees it. Loaded by confine-relay.ts only, in its own process.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';

/** The file of `in/` that holds this launch's greeting until the inner relay has read it. */
const GREETING_FILE = '.greeting';
/** How long the outer relay waits for the inner relay's greeting (said as it accepts, before anything else). */
const GREETING_DEADLINE_MS = 5_000;

/** Joins two sockets both ways, `rest` first to `b`; each ends with the other. */
export function join2(a: Socket, b: Socket, rest: Buffer): void {
  if (rest.length) b.write(rest);
  a.pipe(b).on('error', () => a.destroy());
  b.pipe(a).on('error', () => b.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.resume();
}

/**
 * Reads `greeting` from a peer that must speak first, writing nothing to it: `done` gets what came after the
 * greeting (possibly empty), or null when the peer said anything else, closed, or stayed silent past the deadline.
 */
function provenRelay(peer: Socket, greeting: string, done: (rest: Buffer | null) => void): void {
  const want = Buffer.from(greeting, 'latin1');
  let buf = Buffer.alloc(0);
  let settled = false;
  const settle = (rest: Buffer | null) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    peer.off('data', onData).off('close', onClose);
    if (rest) peer.pause();
    done(rest);
  };
  const timer = setTimeout(() => settle(null), GREETING_DEADLINE_MS);
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const n = Math.min(buf.length, want.length);
    if (!buf.subarray(0, n).equals(want.subarray(0, n))) return settle(null);
    if (buf.length >= want.length) settle(buf.subarray(want.length));
  };
  const onClose = () => settle(null);
  peer.on('data', onData).on('close', onClose);
}

/** Outside, as the person, before the sandbox starts: each port at the loopback, joined to a proven inner relay. */
export function exposeOutside(dir: string, expose: readonly number[]): void {
  if (!expose.length) return;
  const greeting = `trellis-relay ${randomBytes(16).toString('hex')}\n`;
  writeFileSync(join(dir, 'in', GREETING_FILE), greeting, { mode: 0o600 });
  for (const port of expose) {
    createServer((sock) => {
      sock.pause();
      sock.on('error', () => {});
      const to = connect(join(dir, 'in', `${port}.sock`));
      let failed = false;
      const fail = (why: string) => {
        if (failed) return;
        failed = true;
        to.destroy();
        sock.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\ntrellis: the agent's server at port ${port} ${why}; nothing was sent to it\n`);
      };
      to.on('error', (e) => fail(`cannot be reached inside its sandbox (${e.message})`));
      provenRelay(to, greeting, (rest) => (rest ? join2(to, sock, rest) : fail(`did not identify itself as this session's relay within ${GREETING_DEADLINE_MS / 1000} s (its socket was replaced from inside the sandbox, or the sandbox has ended)`)));
    })
      .on('error', (e) => process.stderr.write(`trellis: cannot listen on 127.0.0.1:${port} for the agent's server: ${e.message}\n`))
      .listen(port, '127.0.0.1');
  }
}

/** Inside, before the agent starts: the greeting read and removed, then each `in/<port>.sock`, greeting first. */
export function exposeInside(dir: string, expose: readonly number[]): void {
  if (!expose.length) return;
  const greeting = readFileSync(join(dir, 'in', GREETING_FILE), 'latin1');
  rmSync(join(dir, 'in', GREETING_FILE));
  for (const port of expose) {
    createServer((sock) => {
      sock.pause();
      sock.write(greeting);
      const to = connect(port, '127.0.0.1');
      to.on('error', () => sock.destroy());
      to.once('connect', () => join2(sock, to, Buffer.alloc(0)));
      sock.on('error', () => to.destroy());
    }).listen(join(dir, 'in', `${port}.sock`));
  }
}
