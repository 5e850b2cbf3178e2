import { useState } from 'preact/hooks';
import { enc } from '../api';
import { ErrorBox, useAction } from '../ui';
import { errorOf, hub } from '../host/hub';
import { projectList } from '../host/projects-store';
import type { RemoteHost } from '../../../projections/project-row.js';

/**
 * Other machines this dashboard reaches over SSH (issue 31): each with where its connection stands, in
 * ssh's own words when it cannot connect, and what to do about it; a form to add one and a button to
 * remove one (`/hub/hosts`, the same verbs as `trellis hosts add|rm`). Their projects are in the list above.
 */
export function HostsSection() {
  const hosts = projectList.value?.hosts ?? [];
  return (
    <section class="hosts" aria-labelledby="hosts-h">
      <h2 id="hosts-h">Other machines</h2>
      <p class="muted">Projects on other computers, reached over SSH with your own keys. Nothing is installed or opened on them beyond what your SSH login allows.</p>
      {hosts.length ? (
        <ul class="list" aria-label="Other machines">
          {hosts.map((h) => (
            <HostItem h={h} key={h.name} />
          ))}
        </ul>
      ) : null}
      <AddHost />
    </section>
  );
}

const STATE = { online: 'connected', connecting: 'connecting…', offline: 'cannot connect' } as const;

function HostItem({ h }: { h: RemoteHost }) {
  const { busy, error, run } = useAction();
  const remove = () =>
    run(async () => {
      const a = await hub('DELETE', `hub/hosts/${enc(h.name)}`);
      if (a.status !== 204) throw errorOf(a, 'removing the machine');
    });
  return (
    <li class="host-row" data-testid={`host-${h.name}`} data-state={h.state}>
      <div class="project-main">
        <strong>{h.name}</strong> <span class="muted">{h.destination}</span>
        {h.state === 'offline' ? (
          <div class="muted" data-testid="host-reason">
            SSH said: {h.reason}
            {h.repair ? <div>{h.repair}</div> : null}
          </div>
        ) : null}
      </div>
      <span class={`chip ${h.state === 'online' ? 'online' : 'offline'}`} data-testid="host-state">
        {STATE[h.state]}
      </span>
      <button class="button quiet" type="button" onClick={remove} disabled={busy} aria-label={`Stop showing ${h.name}`}>
        {busy ? 'Removing…' : 'Remove'}
      </button>
      {error ? <ErrorBox error={error} title={`${h.name} was not removed`} /> : null}
    </li>
  );
}

function AddHost() {
  const [form, setForm] = useState({ name: '', destination: '', trellis: '', sshConfig: '' });
  const { busy, error, run } = useAction();
  const field = (key: keyof typeof form, label: string, hint: string) => (
    <label>
      <span>{label}</span>
      <input value={form[key]} placeholder={hint} spellcheck={false} onInput={(e) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value })} />
    </label>
  );
  return (
    <form
      class="toolbar add-host"
      aria-label="Add a machine"
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const body = { name: form.name.trim(), destination: form.destination.trim(), ...(form.trellis.trim() ? { trellis: form.trellis.trim() } : {}), ...(form.sshConfig.trim() ? { sshConfig: form.sshConfig.trim() } : {}) };
          const a = await hub('POST', 'hub/hosts', body);
          if (a.status !== 201) throw errorOf(a, 'adding the machine');
          setForm({ name: '', destination: '', trellis: '', sshConfig: '' });
        });
      }}
    >
      {field('name', 'Name', 'gpu')}
      {field('destination', 'SSH destination', 'me@gpu.lan')}
      {field('trellis', 'Trellis command there (optional)', 'trellis')}
      {field('sshConfig', 'SSH config file (optional)', '/home/me/.ssh/other_config')}
      <button class="button" type="submit" disabled={busy}>
        {busy ? 'Adding…' : 'Add machine'}
      </button>
      {error ? <ErrorBox error={error} title="The machine was not added" /> : null}
    </form>
  );
}
