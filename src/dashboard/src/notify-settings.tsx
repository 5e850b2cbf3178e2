import './notify.css';
import { useEffect, useState } from 'preact/hooks';
import type { ProjectRow } from '../../projections/project-row.js';
import { errorOf, hub } from './host/hub';
import { ErrorBox } from './ui';

interface Quiet {
  readonly mute: readonly string[];
  readonly quietHours: { readonly from: string; readonly to: string } | null;
}

/**
 * Quiet by choice: which projects never notify, and the hours nobody is told (hub.json `notify`, the
 * gateway's local time). Saved against the revision it was read at, like every hub.json write.
 */
export function NotifySettings({ projects }: { projects: readonly ProjectRow[] }) {
  const [base, setBase] = useState<{ quiet: Quiet; etag: string } | null>(null);
  const [mute, setMute] = useState<Set<string>>(new Set());
  const [quietOn, setQuietOn] = useState(false);
  const [from, setFrom] = useState('22:00');
  const [to, setTo] = useState('07:00');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const load = async () => {
    const a = await hub<Quiet>('GET', 'hub/notify');
    if (a.status !== 200) throw errorOf(a, 'Reading the notification settings');
    setBase({ quiet: a.body, etag: a.etag ?? '' });
    setMute(new Set(a.body.mute));
    setQuietOn(!!a.body.quietHours);
    if (a.body.quietHours) (setFrom(a.body.quietHours.from), setTo(a.body.quietHours.to));
  };
  useEffect(() => void load().catch(setError), []);
  if (!base) return error ? <ErrorBox error={error} title="The notification settings could not be read" /> : null;

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const a = await hub('PUT', 'hub/notify', { mute: [...mute], quietHours: quietOn ? { from, to } : null }, { 'If-Match': base.etag });
    if (a.status === 412) {
      await load();
      return setError({ code: 'STALE', message: 'The settings changed elsewhere meanwhile; they are shown as they are now. Make your change again.' });
    }
    if (a.status !== 200) return setError(errorOf(a, 'Saving the notification settings'));
    setBase({ quiet: { mute: [...mute], quietHours: quietOn ? { from, to } : null }, etag: a.etag ?? '' });
    setSaved(true);
  };
  return (
    <form class="card notify-settings" data-testid="notify-settings" onSubmit={(e) => void save(e)}>
      <h2>Quiet</h2>
      <fieldset>
        <legend>Projects that never notify</legend>
        {projects.map((p) => (
          <label key={p.id}>
            <input
              type="checkbox"
              data-testid={`mute-${p.id}`}
              checked={mute.has(p.id)}
              onChange={(e) => {
                const next = new Set(mute);
                if ((e.target as HTMLInputElement).checked) next.add(p.id);
                else next.delete(p.id);
                setMute(next);
              }}
            />{' '}
            Mute {p.name}
          </label>
        ))}
      </fieldset>
      <label>
        <input type="checkbox" data-testid="quiet-on" checked={quietOn} onChange={(e) => setQuietOn((e.target as HTMLInputElement).checked)} /> Quiet hours, from{' '}
        <input type="time" aria-label="Quiet from" value={from} disabled={!quietOn} required onInput={(e) => setFrom((e.target as HTMLInputElement).value)} /> to{' '}
        <input type="time" aria-label="Quiet until" value={to} disabled={!quietOn} required onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        <span class="muted"> (this machine’s clock)</span>
      </label>
      <p>
        <button class="button small" type="submit">
          Save
        </button>{' '}
        {saved ? <span role="status">Saved. Notifications follow it from now on.</span> : null}
      </p>
      {error ? <ErrorBox error={error} title="Not saved" /> : null}
    </form>
  );
}
