import { randomUUID } from 'node:crypto';
import { LiveProject } from '../store/board/live.js';
import type { Project } from '../store/compose/open-project.js';
import { defaultRuntime } from '../store/sessions/verbs/runtime.js';
import { SessionSupervisors } from '../store/sessions/verbs/supervisors.js';
import { projectApp } from './app.js';
import { bindPublic } from './bind.js';
import { createReapedServer } from './create-server.js';
import { closeWebSockets, injectWebSockets } from './websocket.js';

export interface Served {
  readonly url: string;
  readonly port: number;
  readonly instanceId: string;
  readonly live: LiveProject;
  close(): Promise<void>;
}

/**
 * Serves a project's API in this process on `host:port` (port 0: any free port), without a supervisor,
 * its session supervisors running until close: what tests and benchmarks use. A bind failure rejects
 * with PORT_IN_USE or BIND_FAILED, naming the port and the repair.
 */
export async function serveProject(project: Project, opts: { port: number; host?: string; instanceId?: string }): Promise<Served> {
  const host = opts.host ?? '127.0.0.1';
  const instanceId = opts.instanceId ?? randomUUID();
  const live = new LiveProject(project).start();
  const app = projectApp(project, live, instanceId);
  const server = createReapedServer(app.fetch);
  injectWebSockets(app, server);
  let port: number;
  try {
    port = await bindPublic(server, opts.port, host);
  } catch (err) {
    await live.stop();
    throw err;
  }
  // Spec §4.2 rule 2: the server runs the queue and turn-failure supervisors from boot.
  const supervisors = new SessionSupervisors(project, defaultRuntime(), live).start();
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    instanceId,
    live,
    close: async () => {
      closeWebSockets(app, 1001, 'server closing');
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      supervisors.stop();
      await live.stop();
    },
  };
}
