import { errorOf, hub } from '../host/hub';
import type { ProjectRow } from '../host/projects-store';
import { ErrorBox, useAction } from '../ui';

/**
 * A row of a project that is being served but was never registered: why it will leave the list when its
 * serve stops (the list keeps only registered projects while they are offline), and the button that keeps it.
 */
export function ServedOnly({ p }: { p: ProjectRow }) {
  const { busy, error, run } = useAction();
  const register = () =>
    run(async () => {
      const a = await hub('POST', 'projects', { path: p.root });
      if (a.status !== 201) throw errorOf(a, `registering ${p.name}`);
    });
  return (
    <div class="served-only" data-testid="served-only">
      <span class="muted">Served, not registered: it leaves this list when its serve stops.</span>{' '}
      <button class="button small" type="button" onClick={register} disabled={busy} aria-label={`Register ${p.name}`}>
        {busy ? 'Registering…' : 'Register to keep it'}
      </button>
      {error ? <ErrorBox error={error} title={`${p.name} was not registered`} /> : null}
    </div>
  );
}
