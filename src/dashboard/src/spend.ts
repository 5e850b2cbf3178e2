import { signal } from '@preact/signals';
import { get } from './api';
import { board } from './store';
import type { CostReport, ProjectSpend } from './types';

/** The project's spend today and this week, as GET /api/cost last said it, and what it was read for. */
const spend = signal<{ key: string; data: ProjectSpend | null }>({ key: '', data: null });

/**
 * The project's spend (issue 42: the project's page and the spawn form), read again only when a session's
 * cost moved on the live board (its figures are in every session's summary) or the day (UTC) changed: an
 * agent's other hook events, an issue written, cost no GET.
 */
export function useProjectSpend(): ProjectSpend | null {
  const sessions = board.value?.sessions ?? [];
  const key = `${new Date().toISOString().slice(0, 10)} ${sessions.map((s) => (s.cost ? `${s.id}:${s.cost.usd}:${s.cost.tokens}` : '')).join(',')}`;
  if (spend.value.key !== key) {
    spend.value = { key, data: spend.value.data };
    get<CostReport>('api/cost?by=day&since=week').then(
      (r) => {
        if (spend.value.key === key) spend.value = { key, data: r.spend ?? null };
      },
      () => {},
    );
  }
  return spend.value.data;
}
