import { Hono } from 'hono';
import type { WebSocket } from 'ws';
import { TrellisError } from '../../events/index.js';
import { PaneHub, type Viewer } from '../../store/sessions/tmux/pane-stream.js';
import type { PaneTarget, PaneTargets } from '../../store/sessions/tmux/pane-target.js';
import { captureSession, sendRawKeys } from '../../store/sessions/tmux/session-io-verbs.js';
import { bodySchema, compiledNow, compileSchema, readJson } from '../body.js';
import type { AppSockets } from '../websocket.js';
import { route } from '../route-table.js';
import { binaryFrame, frameWriter } from '../ws-frame.js';

const rawkeyBody = bodySchema((type) => type({ '+': 'reject', 'keys?': 'string[]', 'hex?': 'string' }));
/** Client → server control messages on the socket (JSON text frames). */
const clientMessage = bodySchema((type) => type({ type: "'input'", data: 'string' }).or({ type: "'resize'", cols: '1 <= number.integer <= 1000', rows: '1 <= number.integer <= 1000' }));

/**
 * Session I/O routes: the live pane over a WebSocket, capture and raw keys (a prompt is a session verb). Thin: parse, call
 * the verb (the same one `trellis session ...` runs), render.
 */
export function sessionIoRoutes(targets: PaneTargets, sockets: AppSockets, hub = new PaneHub(undefined, undefined, binaryFrame)): Hono {
  const app = new Hono<{ Variables: { target: PaneTarget } }>();
  sockets.closers.push((code, reason) => hub.closeAll(code, reason));

  route(app, 'shell', 'GET', '/api/sessions/:id/socket',
    async (c, next) => {
      const mode = c.req.query('mode');
      if (mode !== undefined && mode !== 'read' && mode !== 'write') throw new TrellisError('INVALID_INPUT', `mode is read or write, not ${JSON.stringify(mode)}`);
      const target = await targets.resolve(c.req.param('id'));
      if (!target) throw new TrellisError('SESSION_NOT_FOUND', `no session ${c.req.param('id')} with a live pane`);
      c.set('target', target);
      // Its control messages are checked by a handler that cannot wait: compiled here, before the upgrade.
      await compileSchema(clientMessage);
      await next();
    },
    sockets.upgradeWebSocket((c) => {
      const target = c.get('target');
      const readOnly = c.req.query('mode') === 'read';
      let viewer: Viewer | undefined;
      const refuse = (code: string, message: string) => viewer?.sendJson({ type: 'error', code, message });
      const input = (bytes: Buffer) => {
        if (readOnly) return refuse('READ_ONLY', 'this viewer opened the session read-only (?mode=read); its input is refused');
        void hub.input(targets.lanes, viewer!, bytes).catch((err: Error) => refuse('INPUT_FAILED', err.message));
      };
      return {
        onOpen(_event, ws) {
          const raw = ws.raw as WebSocket;
          const framed = frameWriter(raw);
          viewer = {
            sendBytes: (bytes) => raw.readyState === raw.OPEN && raw.send(bytes, { binary: true }),
            ...(framed ? { sendFramed: framed } : {}),
            sendJson: (message) => raw.readyState === raw.OPEN && raw.send(JSON.stringify(message)),
            buffered: () => raw.bufferedAmount,
            close: (code, reason) => raw.close(code, reason),
          };
          hub.join(target, viewer);
        },
        onMessage(event) {
          if (typeof event.data !== 'string') return input(Buffer.from(event.data as ArrayBuffer));
          let parsed: unknown;
          try {
            parsed = JSON.parse(event.data);
          } catch {
            return refuse('INVALID_INPUT', 'a text frame must be a JSON control message');
          }
          const { check, errors } = compiledNow(clientMessage);
          const msg = check(parsed);
          if (msg instanceof errors) return refuse('INVALID_INPUT', `unknown control message: ${msg.summary}`);
          if (msg.type === 'input') return input(Buffer.from(msg.data, 'utf8'));
          if (readOnly) return refuse('READ_ONLY', 'a read-only viewer cannot resize the session');
          void hub.resize(viewer!, msg.cols, msg.rows).catch((err: Error) => refuse('RESIZE_FAILED', err.message));
        },
        onClose() {
          if (viewer) hub.leave(viewer);
        },
      };
    }),
    () => {
      throw new TrellisError('UPGRADE_REQUIRED', 'this route is a WebSocket: connect with Upgrade: websocket');
    },
  );

  route(app, 'read', 'GET', '/api/sessions/:id/capture', async (c) => {
    const linesQ = c.req.query('lines');
    const lines = linesQ === undefined ? undefined : Number(linesQ);
    if (lines !== undefined && !(Number.isInteger(lines) && lines > 0)) throw new TrellisError('INVALID_INPUT', `lines is a positive whole number, not ${JSON.stringify(linesQ)}`);
    const ansi = c.req.query('ansi');
    if (ansi !== undefined && ansi !== '0' && ansi !== '1') throw new TrellisError('INVALID_INPUT', 'ansi is 0 or 1');
    return c.json(await captureSession(targets, c.req.param('id'), { lines, ansi: ansi === '1' }, hub));
  });

  route(app, 'shell', 'POST', '/api/sessions/:id/rawkey', async (c) => {
    const body = await readJson(c, rawkeyBody);
    return c.json(await sendRawKeys(targets, c.req.param('id'), body));
  });

  return app as unknown as Hono;
}
