import { serve, type ServerType } from '@hono/node-server';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { requireRoot } from '../store/board.js';
import { LiveProject } from '../store/live.js';
import type { Project } from '../store/project.js';
import { createApp } from './app.js';

export interface Served {
  readonly url: string;
  readonly port: number;
  readonly instanceId: string;
  readonly live: LiveProject;
  close(): Promise<void>;
}

/**
 * Serves a project's API on `host:port` (port 0: any free port). A bind failure rejects with an error
 * that names the port and the repair; nothing is left listening.
 */
export function serveProject(project: Project, opts: { port: number; host?: string; instanceId?: string }): Promise<Served> {
  const host = opts.host ?? '127.0.0.1';
  const instanceId = opts.instanceId ?? randomUUID();
  const live = new LiveProject(project).start();
  const app = createApp({ project, live, instance: { instanceId, root: requireRoot(project), startedAt: project.now().toISOString() } });
  return new Promise((resolve, reject) => {
    let server: ServerType;
    const fail = (err: NodeJS.ErrnoException) => {
      void live.stop();
      const why = err.code === 'EADDRINUSE' ? 'is in use by another process' : err.code === 'EACCES' ? 'is not permitted for this user' : `cannot be bound (${err.message})`;
      reject(Object.assign(new Error(`port ${opts.port} on ${host} ${why}; stop what holds it or pass --port <another>`), { code: err.code }));
    };
    server = serve({ fetch: app.fetch, port: opts.port, hostname: host }, (info: AddressInfo) => {
      server.off('error', fail);
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${info.port}/`;
      resolve({
        url,
        port: info.port,
        instanceId,
        live,
        close: async () => {
          await new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          });
          await live.stop();
        },
      });
    });
    server.once('error', fail);
  });
}
