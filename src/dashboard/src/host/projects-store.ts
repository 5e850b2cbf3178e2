import { computed, signal } from '@preact/signals';
import type { ProjectList } from '../../../projections/project-row.js';
import type { InboxItem } from '../inbox';
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

/**
 * The host inbox: every online project's sessions that need a person (each row carries its own, from its
 * backend's board), longest waiting first. Live: every change inside a project re-sends the list.
 */
export const hostInbox = computed<InboxItem[] | null>(() => {
  const list = projectList.value;
  if (!list) return null;
  return list.projects
    .flatMap((p) => (p.inbox ?? []).map((e) => ({ ...e, project: { id: p.id, name: p.host ? `${p.name} on ${p.host}` : p.name }, href: `${p.url}#/sessions/${encodeURIComponent(e.session)}` })))
    .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
});
