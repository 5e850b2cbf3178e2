import type { SessionsProject } from '../log/sessions-project.js';
import type { SessionRegistry } from '../../issues/issues-project.js';

/**
 * The loop-in registry the entry points (the CLI, the backend's child) open projects with: a reply
 * reaches its thread's originating session when that session is online (see registry.ts). The issue
 * verbs, a room below, see only the `SessionRegistry` they declare (issues/issues-project.ts). Loaded on
 * first use: the registry pulls in the session runtime, which no issue read needs.
 */
export const loopInSessions = (project: SessionsProject): SessionRegistry => ({
  isOnline: async (id) => (await import('./registry.js')).sessionRegistry(project).isOnline(id),
  notify: async (id, message) => (await import('./registry.js')).sessionRegistry(project).notify(id, message),
});
