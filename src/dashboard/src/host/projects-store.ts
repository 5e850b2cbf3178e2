import { computed, signal } from '@preact/signals';
import { LiveStream } from '../live';

/** One row of the gateway's reconciled project list (`GET /projects`, `/projects/stream`). */
export interface ProjectRow {
  readonly id: string;
  readonly root: string;
  readonly name: string;
  readonly icon: string | null;
  readonly cataloged: boolean;
  readonly online: boolean;
  readonly reason?: string;
  /** The project's page under this gateway: `/p/<id>/`. */
  readonly url: string;
  readonly gate: 'admin' | 'open' | 'password' | 'loopback';
  readonly gated: boolean;
  readonly openIssues?: number;
  readonly liveSessions?: number;
}

export interface ProjectList {
  readonly projects: readonly ProjectRow[];
  readonly catalogError?: string;
}

/** The list as the stream last sent it (the stream sends the whole list on connect and on every change). */
export const projectList = signal<ProjectList | null>(null);

export const projectsById = computed(() => new Map((projectList.value?.projects ?? []).map((p) => [p.id, p])));

/**
 * The host home's one stream: every `projects` event is the whole reconciled list, so a reconnect needs no
 * catch-up fetch; the first event after a (re)connect counts as "live".
 */
export const projectsStream = new LiveStream(
  'projects/stream',
  {
    projects: (data) => {
      try {
        projectList.value = JSON.parse(data) as ProjectList;
      } catch {}
    },
  },
  'projects',
);
