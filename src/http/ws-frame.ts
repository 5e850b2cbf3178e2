import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/*
 * Pane output framed once for every viewer (issue 22): `ws` frames each `send` anew, per socket, so ten
 * viewers of one pane cost ten framings and ten writes of two buffers. A chunk framed here is one Buffer
 * written as is to every viewer's socket.
 */

/**
 * One unmasked, final binary frame (RFC 6455 §5.2: a server never masks) of the parts in order, header
 * and payload in one Buffer (each part copied once).
 */
export function binaryFrame(parts: Buffer | readonly Buffer[]): Buffer {
  const list = Buffer.isBuffer(parts) ? [parts] : parts;
  const n = list.reduce((sum, b) => sum + b.length, 0);
  const head = n < 126 ? 2 : n < 0x10000 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + n);
  frame[0] = 0x82; // FIN + opcode 2 (binary)
  if (n < 126) frame[1] = n;
  else if (n < 0x10000) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(n), 2);
  }
  let at = head;
  for (const b of list) at += b.copy(frame, at);
  return frame;
}

/**
 * A writer of prepared frames straight to the connection's socket, or null when that is not safe: with
 * an extension negotiated (permessage-deflate) `ws` transforms and may queue what it sends, so a frame
 * written past it could overtake its queue. Without one, `ws` writes every message to the socket at
 * once, in call order, so frames written here keep their order with its own messages, and the socket's
 * queue (which `bufferedAmount` reads) counts them as before.
 */
export function frameWriter(ws: WebSocket): ((frame: Buffer) => void) | null {
  const socket = (ws as unknown as { _socket?: Socket })._socket;
  if (!socket || ws.extensions !== '') return null;
  return (frame) => {
    if (ws.readyState === ws.OPEN) socket.write(frame);
  };
}
