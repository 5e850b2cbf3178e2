import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorBox, useAction } from '../ui';
import { login } from '../host/hub';

/**
 * The login form, shown whenever the hub has a password and the caller is not logged in (a 401, or
 * `/auth/status` says so). With `project`, the password may be that project's gate password or the admin
 * one. After a login `onDone` continues to the view the person was going to.
 */
export function LoginView({ project, onDone }: { project?: string; onDone: () => void | Promise<void> }) {
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await run(async () => {
      await login(password, project);
      setPassword('');
      await onDone();
    });
    if (!ok) input.current?.select();
  };

  return (
    <div class="card login" data-testid="login">
      <h1>Log in</h1>
      <p class="muted">
        {project
          ? 'This project is gated on this host: its password, or the host’s admin password, opens it.'
          : 'This Trellis host has an admin password. Log in to see and manage its projects.'}
      </p>
      <form onSubmit={submit}>
        <label>
          <span>Password</span>
          <input
            ref={input}
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <div class="actions">
          <button class="button primary" type="submit" disabled={busy || !password}>
            {busy ? 'Logging in…' : 'Log in'}
          </button>
        </div>
      </form>
      <ErrorBox error={error} action="login" title={(error as { status?: number } | null)?.status === 429 ? 'Too many attempts' : 'Not logged in'} />
    </div>
  );
}
