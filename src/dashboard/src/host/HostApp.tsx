import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, LinkBadge } from '../ui';
import { LoginView } from '../views/Login';
import { ProjectView } from '../views/ProjectOps';
import { ProjectsView } from '../views/Projects';
import { RegisterView } from '../views/Register';
import { AdminPasswordView } from '../views/AdminPassword';
import { auth, logout, needLogin, nextRoute, refreshAuth, safeNext } from './hub';
import { hostHref, hostRoute, type HostRoute } from './host-route';
import { hostInbox, projectList, projectsById, projectsStream } from './projects-store';
import { installShortcuts, Palette, shortcutsOpen, ShortcutsHelp, type PaletteItem } from '../palette';
import { titleWithCount } from '../inbox';
import { useInstallableApp } from '../notify-push';
import { useGatewayNotifications } from '../notify-stream';
import { HostInboxView } from '../views/HostInbox';

/** What the palette reaches from the host page: every project (its page), the inbox's sessions, the host views. */
function hostPaletteItems(): PaletteItem[] {
  const projects = projectList.value?.projects ?? [];
  return [
    { kind: 'view', label: 'Inbox', href: hostHref.inbox() },
    { kind: 'view', label: 'Projects', href: hostHref.projects() },
    { kind: 'action', label: 'Register a folder', href: hostHref.register() },
    { kind: 'action', label: 'Change the admin password', href: hostHref.password() },
    { kind: 'action', label: 'Show keyboard shortcuts', run: () => (shortcutsOpen.value = true) },
    ...(hostInbox.value ?? []).map((e): PaletteItem => ({ kind: 'session', label: e.title, hint: `${e.project?.name ?? ''} · ${e.waitsFor}`, href: e.href })),
    ...projects.map((p): PaletteItem => ({ kind: 'project', label: p.name, hint: p.root, href: p.online ? p.url : hostHref.project(p.id) })),
    ...projects.map((p): PaletteItem => ({ kind: 'action', label: `Manage ${p.name}`, hint: p.root, href: hostHref.project(p.id) })),
  ];
}

const TITLES: Record<HostRoute['view'], string> = { inbox: 'Inbox', projects: 'Projects', project: 'Project', register: 'Register a folder', login: 'Log in', password: 'Admin password', missing: 'Not found' };

/**
 * The host home (the gateway's `/`): the projects on this machine and the host operations, behind the
 * login form when the hub has a password. The project stream starts once the caller may read it.
 */
export function HostApp() {
  const r = hostRoute.value;
  const [authError, setAuthError] = useState<unknown>(null);
  useEffect(() => {
    refreshAuth().catch(setAuthError);
  }, []);
  const a = auth.value;
  const admitted = !!a?.admin && !needLogin.value;
  useEffect(() => {
    if (admitted) projectsStream.start();
  }, [admitted]);
  // An EventSource cannot read its refusal: when the stream drops, ask whether the login ended meanwhile
  // (then the form shows, and the stream's next retry succeeds after it).
  const link = projectsStream.state.value;
  useEffect(() => {
    if (link === 'reconnecting') refreshAuth().catch(() => {});
  }, [link]);
  const inbox = admitted ? hostInbox.value : null;
  const waiting = inbox?.length ?? 0;
  // The gateway decides what is news (debounced, muted, quiet hours): the page shows what it says.
  useGatewayNotifications(admitted);
  useInstallableApp(admitted);
  useEffect(() => {
    document.title = titleWithCount(waiting, `${r.view === 'project' ? (projectsById.value.get(r.arg)?.name ?? 'Project') : TITLES[r.view]} · Trellis`);
  }, [r, projectsById.value, waiting]);
  useEffect(() => {
    scrollTo(0, 0);
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [r.view, r.arg, admitted]);

  // `#/login?next=#/…` once logged in (just now, or already when the page opened) is that view; replaced,
  // so Back does not land on a login form that would send the person forward again. Any other next
  // (another site, a path, the login view itself) is the projects, and the address says so.
  useEffect(() => {
    if (!admitted || r.view !== 'login') return;
    location.replace(nextRoute(r.query.get('next')) ?? hostHref.projects());
  }, [admitted, r]);

  const continueAfterLogin = async () => {
    await refreshAuth();
    // A path on this origin (another page, such as a project's) is left by a real navigation.
    if (r.view === 'login') {
      const next = safeNext(r.query.get('next'));
      if (!next.startsWith('#')) location.assign(next);
    }
  };

  let body;
  if (authError) body = <ErrorBox error={authError} title="The gateway did not say who you are" />;
  else if (!a) body = <p class="muted">Loading…</p>;
  // The password page answers before the admin check: without a password it is how one gets set.
  else if (r.view === 'password' && (a.mayChangePassword || (a.admin && !needLogin.value))) body = <AdminPasswordView />;
  else if (needLogin.value || (r.view === 'login' && !a.admin)) body = <LoginView onDone={continueAfterLogin} />;
  else if (!a.admin) body = <ErrorBox error={{ code: 'FORBIDDEN', message: 'This login does not open the host’s projects (admin scope is needed).' }} />;
  else if (r.view === 'projects' || r.view === 'login') body = <ProjectsView />;
  else if (r.view === 'project') body = <ProjectView id={r.arg} key={r.arg} />;
  else if (r.view === 'register') body = <RegisterView />;
  else if (r.view === 'inbox') body = <HostInboxView />;
  else
    body = (
      <div class="card">
        <h1>No such page</h1>
        <p>
          Nothing lives at <code>#/{r.arg}</code>. Go to the <a href={hostHref.projects()}>projects</a>.
        </p>
      </div>
    );

  const tab = r.view === 'inbox' ? 'inbox' : r.view === 'register' ? 'register' : r.view === 'projects' || r.view === 'project' ? 'projects' : '';
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={hostHref.projects()}>
          Trellis
        </a>
        {admitted ? (
          <nav aria-label="Host views">
            <a href={hostHref.inbox()} aria-current={tab === 'inbox' ? 'page' : undefined}>
              Inbox{waiting ? <span class="count" data-testid="inbox-count" title="sessions that need you, in every project">{waiting}</span> : null}
            </a>
            <a href={hostHref.projects()} aria-current={tab === 'projects' ? 'page' : undefined}>
              Projects
            </a>
            <a href={hostHref.register()} aria-current={tab === 'register' ? 'page' : undefined}>
              Register
            </a>
          </nav>
        ) : null}
        <div class="status-bar">
          {admitted ? <LinkBadge state={projectsStream.state.value} /> : null}
          {a?.mayChangePassword ? (
            <a class="button small password-link" href={hostHref.password()} aria-current={r.view === 'password' ? 'page' : undefined} data-testid="password-link">
              {a.passwordSet ? 'Password' : 'Set a password'}
            </a>
          ) : null}
          {a?.loggedIn ? (
            <button
              class="button small logout"
              type="button"
              onClick={async () => {
                await logout();
                // A fresh page: every stream and cached answer of the ended session goes with it.
                location.reload();
              }}
            >
              Log out
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {body}
      </main>
      {admitted ? <Palette items={hostPaletteItems} /> : null}
      <ShortcutsHelp />
    </>
  );
}
