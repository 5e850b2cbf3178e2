import { useEffect, useState } from 'preact/hooks';
import { enc } from '../api';
import { ErrorBox, useAction } from '../ui';
import { errorOf, hub, hubBase } from './hub';
import { hostHref } from './host-route';

/** `GET /projects/:id/whereabouts`: the folder an offline project lives in, and whether it is registered. */
interface Whereabouts {
  readonly id: string;
  readonly root: string;
  readonly name: string;
  readonly cataloged: boolean;
}

/**
 * A project's page when nothing serves it: what that means, and the way on, as buttons. Start runs its
 * backend (the page then comes back by itself); Register adds it to the host's list for good. A project
 * that was only being served is not on that list (it is listed only while a serve runs), so the page says so
 * rather than sending the person to a list that no longer shows it.
 */
export function OfflineProject({ project }: { project: string }) {
  const [where, setWhere] = useState<Whereabouts | null | 'unknown' | 'no-admin'>(null);
  const [started, setStarted] = useState(false);
  const { busy, error, run } = useAction();
  useEffect(() => {
    void hub<Whereabouts>('GET', `projects/${enc(project)}/whereabouts`).then(
      (a) => setWhere(a.status === 200 ? a.body : a.status === 401 || a.status === 403 ? 'no-admin' : 'unknown'),
      () => setWhere('unknown'),
    );
  }, [project]);
  const start = () =>
    run(async () => {
      const a = await hub<{ logTail?: string }>('POST', `projects/${enc(project)}/serve`, {});
      if (a.status !== 200) {
        const err = errorOf(a, 'starting the project');
        throw { code: err.code, message: a.body.logTail ? `${err.message}\n\n${a.body.logTail}` : err.message };
      }
      setStarted(true);
    });
  const register = (w: Whereabouts) =>
    run(async () => {
      const a = await hub('POST', 'projects', { path: w.root });
      if (a.status !== 201) throw errorOf(a, 'registering the project');
      setWhere({ ...w, cataloged: true });
    });
  return (
    <div class="card offline-project" data-testid="project-offline">
      <h1>{typeof where === 'object' && where ? `${where.name} is offline` : 'This project is offline'}</h1>
      <p>Nothing is serving it right now, so its board, issues and sessions cannot be shown. Its work is safe in its folder.</p>
      {where === null ? <p class="muted">Looking it up…</p> : null}
      {typeof where === 'object' && where ? (
        <>
          <p>
            It lives in <code>{where.root}</code>.{' '}
            {where.cataloged
              ? 'It is registered, so it stays on the projects list while it is offline.'
              : 'It was being served without being registered, so it left the projects list when that serve stopped. Register it to keep it on the list.'}
          </p>
          <div class="actions">
            <button class="button primary" onClick={start} disabled={!!busy || started}>
              {busy ? 'Working…' : started ? 'Starting…' : 'Start it'}
            </button>
            {where.cataloged ? null : (
              <button class="button" onClick={() => register(where)} disabled={!!busy}>
                Register it
              </button>
            )}
          </div>
          {started ? <p class="muted" role="status">Started: this page opens the project as soon as it answers.</p> : null}
          {where.cataloged ? <p class="muted" role="status" data-testid="registered">On the <a href={hubBase}>projects list</a>.</p> : null}
        </>
      ) : null}
      {where === 'no-admin' ? <p>Starting or registering a project needs the host's admin login: ask the person who runs this host, or <a href={hubBase}>log in as admin</a>.</p> : null}
      {where === 'unknown' ? (
        <p>
          This host has no record of where it lives. <a href={`${hubBase}${hostHref.register()}`}>Register its folder</a> to add it to the projects list, then start it there.
        </p>
      ) : null}
      <ErrorBox error={error} title="That did not work" />
    </div>
  );
}
