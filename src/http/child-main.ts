/**
 * The HTTP child of `trellis serve`: the real server, on a private loopback port, behind the
 * supervisor's public proxy. The supervisor passes, in the environment:
 *   TRELLIS_PROJECT_ROOT  the project to serve
 *   TRELLIS_INSTANCE_ID   the serve lifetime's instance id (the same for every child)
 *   TRELLIS_CHILD_ID      this child's generation, echoed in the `X-Trellis-Child` header
 *   TRELLIS_API_URL       the supervisor's loopback face, inherited by sessions this child launches
 * and talks over IPC: the child says { type: 'listening', port }; the supervisor says
 * { type: 'api-url', url } and { type: 'drain', deadlineMs }.
 */
import './child-guards.js';
import { Hono } from 'hono';
import { LiveProject } from '../store/board/live.js';
import { openProject } from '../store/compose/open-project.js';
import { loopInSessions } from '../store/sessions/verbs/loop-in.js';
import { defaultRuntime } from '../store/sessions/verbs/runtime.js';
import { SessionSupervisors } from '../store/sessions/verbs/supervisors.js';
import { projectApp } from './app.js';
import { notFound, onError } from './errors.js';
import { createReapedServer } from './create-server.js';
import { closeWebSockets, injectWebSockets } from './websocket.js';

/** After a drain starts, idle keep-alive sockets get this long to send one more request (answered with `Connection: close`). */
const IDLE_GRACE_MS = 1_000;

const root = process.env.TRELLIS_PROJECT_ROOT ?? process.cwd();
const instanceId = process.env.TRELLIS_INSTANCE_ID ?? 'standalone';
const childId = process.env.TRELLIS_CHILD_ID ?? String(process.pid);
// Replies through the API loop in their thread's originating session, as the CLI's do.
const project = openProject(root, { sessions: loopInSessions });
const live = new LiveProject(project).start();
let draining = false;

const app = new Hono();
app.use(async (c, next) => {
  await next();
  c.header('X-Trellis-Child', childId);
  // While draining, every answer tells the client to reconnect, which the proxy sends to the new child.
  if (draining) c.header('Connection', 'close');
});
const inner = projectApp(project, live, instanceId);
app.route('/', inner);
// Spec §4.2 rule 2: the server runs the queue and turn-failure supervisors from boot; a drain stops them.
const supervisors = new SessionSupervisors(project, defaultRuntime(), live).start();
app.notFound(notFound);
app.onError(onError);

const server = createReapedServer(app.fetch);
injectWebSockets(inner, server);
const sockets = new Set<import('node:net').Socket>();
server.on('connection', (socket) => {
  sockets.add(socket);
  socket.once('close', () => {
    sockets.delete(socket);
    if (draining && sockets.size === 0) allClosed?.();
  });
});
let allClosed: (() => void) | undefined;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.send?.({ type: 'listening', port: typeof addr === 'object' && addr ? addr.port : 0 });
});

process.on('message', (msg: { type?: string; url?: string; deadlineMs?: number }) => {
  if (msg?.type === 'api-url' && msg.url) process.env.TRELLIS_API_URL = msg.url;
  if (msg?.type === 'drain') void drain(msg.deadlineMs ?? 10_000);
});
// A supervisor that dies takes its children with it.
process.on('disconnect', () => void drain(0));

/**
 * Drains: the proxy already sends new connections to the next child, so this one only finishes what it
 * has. Every answer now carries `Connection: close`; a keep-alive socket gets a grace period to send one
 * more request (closing it sooner would race that request: Node ≥ 19's server.close() does exactly that,
 * so it is called last); long-lived streams are cut at the deadline. Then the child exits.
 */
async function drain(deadlineMs: number): Promise<void> {
  if (draining) return;
  draining = true;
  // The new child already takes new connections: live WebSockets (pane streams) reconnect there now (1012).
  closeWebSockets(inner, 1012, 'server restarting');
  const closed = new Promise<void>((resolve) => {
    allClosed = resolve;
    if (sockets.size === 0) resolve();
  });
  const idle = setTimeout(() => server.closeIdleConnections(), Math.min(IDLE_GRACE_MS, deadlineMs));
  // Long-lived streams (SSE) are bounded: past the deadline everything still open is closed.
  const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
  await closed;
  clearTimeout(idle);
  clearTimeout(deadline);
  server.close();
  supervisors.stop();
  await live.stop();
  process.exit(0);
}
