import { useEffect } from 'preact/hooks';
import { boot } from './host/boot';
import { underHub } from './host/hub';
import { useGatewayNotifications } from './notify-stream';
import { href, route, type Route } from './router';
import { board, graphStream, loadProjectName, projectName, revision } from './store';
import { installShortcuts, Palette, shortcutsOpen, ShortcutsHelp, type PaletteItem } from './palette';
import { hub } from './host/hub';
import { issueList } from './views/Issues';
import { ConfigBanner, FreshnessStamp, LinkBadge } from './ui';
import { BoardView } from './views/Board';
import { IssuesView } from './views/Issues';
import { NewIssueView } from './views/NewIssue';
import { NodeView } from './views/Node';
import { ThreadView } from './views/Thread';
import { EvalView } from './views/Eval';
import { ScenarioView } from './views/Scenario';
import { InboxView, projectInbox } from './views/Inbox';
import { titleWithCount } from './inbox';
import { SessionsView, unreadSessions } from './views/Sessions';
import { SessionView } from './views/Session';
import './styles.css';

/** One entry per view; the host views (projects, sessions, login) join here when their backends land. */
const VIEWS: Record<Route['view'], (r: Route) => preact.JSX.Element> = {
  board: () => <BoardView />,
  node: (r) => <NodeView id={r.arg} key={r.arg} />,
  issues: () => <IssuesView />,
  issue: (r) => <ThreadView id={r.arg} key={r.arg} />,
  'new-issue': (r) => <NewIssueView key={r.query.toString()} />,
  sessions: () => <SessionsView />,
  session: (r) => <SessionView id={r.arg} key={r.arg} />,
  eval: () => <EvalView />,
  scenario: (r) => <ScenarioView id={r.arg} key={r.arg} />,
  inbox: () => <InboxView />,
  missing: (r) => (
    <div class="card">
      <h1>No such page</h1>
      <p>
        Nothing lives at <code>#/{r.arg}</code>. Go to the <a href={href.board()}>board</a> or the <a href={href.issues()}>issues</a>.
      </p>
    </div>
  ),
};

const TITLES: Record<Route['view'], string> = { board: 'Board', node: 'Node', issues: 'Issues', issue: 'Issue', 'new-issue': 'Open an issue', sessions: 'Sessions', session: 'Session', eval: 'Eval', scenario: 'Scenario', inbox: 'Inbox', missing: 'Not found' };

function App() {
  const r = route.value;
  const tab = r.view === 'node' || r.view === 'board' ? 'board' : r.view === 'session' ? 'sessions' : r.view === 'missing' ? '' : r.view === 'scenario' ? 'eval' : r.view === 'sessions' || r.view === 'eval' || r.view === 'inbox' ? r.view : 'issues';
  const waiting = projectInbox.value?.length ?? 0;
  // Any dashboard tab under a gateway shows the gateway's notifications, for every project.
  useGatewayNotifications(!!underHub);
  useEffect(() => {
    document.title = titleWithCount(waiting, `${r.view === 'node' ? r.arg : TITLES[r.view]} · ${projectName.value ?? 'Trellis'}`);
  }, [r, waiting, projectName.value]);
  // A new view starts at its top and takes the focus, so keyboard and screen-reader users land in it.
  useEffect(() => {
    scrollTo(0, 0);
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [r.view, r.arg]);
  const b = board.value;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href.board()}>
          Trellis
        </a>
        {projectName.value ? (
          <span class="project-name-top" data-testid="project-name">
            {projectName.value}
          </span>
        ) : null}
        <nav aria-label="Views">
          {underHub ? <a href={underHub.base}>All projects</a> : null}
          <a href={href.inbox()} aria-current={tab === 'inbox' ? 'page' : undefined}>
            Inbox{waiting ? <span class="count" data-testid="inbox-count" title="sessions that need you">{waiting}</span> : null}
          </a>
          <a href={href.board()} aria-current={tab === 'board' ? 'page' : undefined}>
            Board
          </a>
          <a href={href.issues({ status: 'open' })} aria-current={tab === 'issues' ? 'page' : undefined}>
            {/* A count only when there is something to count: a red "0" reads as an alarm about nothing. */}
            Issues{b && b.freshness.open > 0 ? <span class="count" data-testid="issues-count" title="open issues">{b.freshness.open}</span> : null}
          </a>
          <a href={href.sessions()} aria-current={tab === 'sessions' ? 'page' : undefined}>
            Sessions{unreadSessions.value ? <span class="count" title="sessions with output you have not viewed">{unreadSessions.value}</span> : null}
          </a>
          <a href={href.eval()} aria-current={tab === 'eval' ? 'page' : undefined}>
            Eval
          </a>
        </nav>
        <div class="status-bar">
          {b ? <FreshnessStamp f={b.freshness} /> : null}
          <LinkBadge state={graphStream.state.value} />
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <ConfigBanner />
        {VIEWS[r.view](r)}
      </main>
      <Palette items={projectPaletteItems} />
      <ShortcutsHelp />
    </>
  );
}

/** What the palette reaches from a project's page: its views and actions, nodes, issues, sessions, and the host's projects. */
async function projectPaletteItems(): Promise<PaletteItem[]> {
  const b = board.value;
  const views: PaletteItem[] = [
    { kind: 'view', label: 'Inbox', href: href.inbox() },
    { kind: 'view', label: 'Board', href: href.board() },
    { kind: 'view', label: 'Issues', href: href.issues({ status: 'open' }) },
    { kind: 'view', label: 'Sessions', href: href.sessions() },
    { kind: 'view', label: 'Eval scoreboard', href: href.eval() },
    { kind: 'action', label: 'Open an issue', href: href.newIssue() },
    { kind: 'action', label: 'Spawn a session', href: href.sessions() },
    { kind: 'action', label: 'Show keyboard shortcuts', run: () => (shortcutsOpen.value = true) },
    ...(underHub ? [{ kind: 'view' as const, label: 'All projects', href: underHub.base }] : []),
  ];
  const sessions: PaletteItem[] = (b?.sessions ?? []).map((s) => ({ kind: 'session', label: s.title || s.id, hint: `${s.id} · ${s.state}${s.reason ? ` ${s.reason}` : ''}`, href: href.session(s.id) }));
  const nodes: PaletteItem[] = (b?.nodes ?? []).map((n) => ({ kind: 'node', label: n.title, hint: n.id, href: href.node(n.id) }));
  const [issues, projects] = await Promise.all([
    issueList(revision.value).then(
      (l) => l.issues.map((i): PaletteItem => ({ kind: 'issue', label: i.concern, hint: `${i.id} · ${i.status}`, href: href.issue(i.id) })),
      () => [],
    ),
    underHub
      ? hub<{ projects?: { id: string; name: string; url: string }[] }>('GET', 'projects').then(
          (a) => (a.status === 200 ? (a.body.projects ?? []).map((p): PaletteItem => ({ kind: 'project', label: p.name, hint: p.id, href: `${underHub!.base}${p.url.replace(/^\//, '')}` })) : []),
          () => [],
        )
      : Promise.resolve([]),
  ]);
  return [...views, ...sessions, ...nodes, ...issues, ...projects];
}

// The same bundle is the host home at a gateway's `/` (host/boot.tsx tells which page this is).
void boot(document.getElementById('app')!, () => {
  graphStream.start();
  void loadProjectName();
  installShortcuts(href.inbox());
  return <App />;
});
