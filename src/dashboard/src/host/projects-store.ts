import { computed, signal } from '@preact/signals';
import type { ProjectList } from '../../../projections/project-row.js';
import { LiveStream } from '../live';

export type { ProjectList, ProjectRow } from '../../../projections/project-row.js';

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
