import { render, type JSX } from 'preact';
import { LoginView } from '../views/Login';
import { HostApp } from './HostApp';
import { OfflineProject } from './OfflineProject';
import { backendAnswers, hubBase, whereAmI } from './hub';
import { hostHref } from './host-route';
import { installShortcuts } from '../palette';
import './host.css';

/**
 * Renders the right app for where the page is: the host home at a gateway's `/`, the project app (built
 * by `project`) at `trellis serve`'s `/` or a gateway's `/p/<id>/`, or, under `/p/<id>/` when the gateway
 * refused the project's API, the login form (then the same view again) or an "offline" notice.
 */
export async function boot(root: HTMLElement, project: () => JSX.Element): Promise<void> {
  const where = await whereAmI();
  let app: JSX.Element;
  if (where.kind === 'hub') {
    installShortcuts(hostHref.inbox());
    app = <HostApp />;
  }
  else if (where.kind === 'project') app = project();
  else
    app = (
      <>
        <header class="top">
          <a class="brand" href={hubBase}>
            Trellis
          </a>
          <nav aria-label="Host views">
            <a href={hubBase}>All projects</a>
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {where.kind === 'project-login' ? (
            <LoginView project={where.project} onDone={() => location.reload()} />
          ) : (
            <OfflineProject project={where.project} />
          )}
        </main>
      </>
    );
  // An offline project's page comes back by itself once its backend answers (started from anywhere).
  if (where.kind === 'project-offline') {
    const timer = setInterval(() => {
      void backendAnswers().then((up) => up && (clearInterval(timer), location.reload()));
    }, 2000);
  }
  // Replace the boot message (render() adds to what is there).
  root.textContent = '';
  render(app, root);
}
