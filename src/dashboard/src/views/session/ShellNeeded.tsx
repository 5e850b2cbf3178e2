import { mayRunCommands } from '../../host/hub';

export { mayRunCommands };

/**
 * Said where an action that runs commands on the machine would be, to a login that may not run them (a
 * project password whose gate does not grant `shell`): no button that the gateway would refuse.
 */
export function ShellNeeded({ what }: { what: string }) {
  return (
    <p class="card muted" data-testid="shell-needed">
      {what} runs commands on the machine as its user, so it needs the admin login (or a project password that grants it). Your login can read this project and work on
      its issues.
    </p>
  );
}
