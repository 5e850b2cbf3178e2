import { useState } from 'preact/hooks';
import { ErrorBox, useAction } from '../ui';
import { auth, changeAdminPassword } from '../host/hub';
import { hostHref } from '../host/host-route';
import './admin-password.css';

/** The gateway's shortest accepted password (store/host/admin-password.ts), checked here first so the form says it before sending. */
const MIN_LENGTH = 8;

/**
 * The admin password from the page: the first one while there is none (the gateway takes it from this
 * machine only), later a change that names the current one. The gateway ends every other login and keeps
 * this one.
 */
export function AdminPasswordView() {
  const a = auth.value;
  const first = !a?.passwordSet;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState<'set' | 'changed' | null>(null);
  const { busy, error, setError, run } = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(null);
    if ([...next].length < MIN_LENGTH) return setError({ code: 'PASSWORD_SHORT', message: `The new password needs at least ${MIN_LENGTH} characters.` });
    if (next !== again) return setError({ code: 'PASSWORD_MISMATCH', message: 'The two new passwords differ. Type the same one in both boxes.' });
    await run(async () => {
      const r = await changeAdminPassword(next, first ? undefined : current);
      setCurrent('');
      setNext('');
      setAgain('');
      setDone(r.first ? 'set' : 'changed');
    });
  };

  // Done: the words and the way on, not the form again (which would now read "change" right after a first set).
  if (done) {
    return (
      <div class="card password-card" data-testid="admin-password">
        <h1>Admin password</h1>
        <p class="notice" role="status" data-testid="password-done">
          {done === 'set' ? 'The admin password is set. You are logged in here; other browsers now need the password.' : 'The admin password is changed. Every other browser has been logged out.'}
        </p>
        <div class="actions">
          <a class="button primary" href={hostHref.projects()}>
            Back to the projects
          </a>
        </div>
      </div>
    );
  }
  if (a && !a.mayChangePassword) {
    return (
      <div class="card password-card">
        <h1>Admin password</h1>
        <p>
          {a.passwordSet && a.admin
            ? 'The password is not changed over a plain http:// address from another machine, where it would cross the network readable by anyone on the way. Open the gateway at its https:// address, or change it on the machine Trellis runs on.'
            : a.passwordSet
            ? 'Log in with the admin password to change it.'
            : 'The first admin password can only be set from a browser on the machine Trellis runs on (open this page there, at a 127.0.0.1 address).'}
        </p>
      </div>
    );
  }
  const field = (label: string, value: string, set: (v: string) => void, autocomplete: string, name: string) => (
    <label>
      <span>{label}</span>
      <input type="password" name={name} autocomplete={autocomplete} required value={value} onInput={(e) => set((e.currentTarget as HTMLInputElement).value)} />
    </label>
  );
  return (
    <div class="card password-card" data-testid="admin-password">
      <h1>{first ? 'Set an admin password' : 'Change the admin password'}</h1>
      <p class="muted">
        {first
          ? 'There is no admin password yet, so only this machine can use this page. Set one before you open the gateway to other machines or a phone; from then on everyone logs in with it.'
          : 'Type the current password, then the new one twice. Every other browser that is logged in is logged out; this one stays logged in.'}
      </p>
      <form onSubmit={submit} class="stack">
        {first ? null : field('Current password', current, setCurrent, 'current-password', 'current')}
        {field('New password', next, setNext, 'new-password', 'new')}
        {field('New password again', again, setAgain, 'new-password', 'again')}
        <p class="muted small">At least {MIN_LENGTH} characters.</p>
        <div class="actions">
          <button class="button primary" type="submit" disabled={busy || !next || !again || (!first && !current)}>
            {busy ? 'Saving…' : first ? 'Set password' : 'Change password'}
          </button>
        </div>
      </form>
      <ErrorBox error={error} action="password" title={first ? 'No password was set' : 'The password was not changed'} />
    </div>
  );
}
