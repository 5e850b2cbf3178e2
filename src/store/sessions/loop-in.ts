import type { Project, SessionRegistry } from '../project/project.js';

/**
 * The loop-in registry the entry points (the CLI, the backend's child) open projects with: a reply
 * reaches its thread's originating session when that session is online (see registry.ts). Handed in
 * from there so that store/project/project.ts never imports the session layer, which imports it. Loaded on
 * first use: the registry pulls in the session runtime, which no issue read needs.
 */
export const loopInSessions = (project: Project): SessionRegistry => ({
  isOnline: async (id) => (await import('./registry.js')).sessionRegistry(project).isOnline(id),
  notify: async (id, message) => (await import('./registry.js')).sessionRegistry(project).notify(id, message),
});
