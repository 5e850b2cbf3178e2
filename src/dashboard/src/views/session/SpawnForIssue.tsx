import { mayRunCommands } from './ShellNeeded';

/**
 * On an open issue: the way to work on it, a link to the spawn form with the issue, its concern and its nodes
 * filled in (the session is then linked to the issue, as `trellis session spawn --issue` does).
 */
export function SpawnForIssue({ issue }: { issue: { id: string; concern: string; status: string; nodes: readonly string[] } }) {
  if (issue.status !== 'open' || !mayRunCommands.value) return null;
  const query = new URLSearchParams({ issue: issue.id, task: issue.concern, nodes: issue.nodes.join(' ') });
  return (
    <p class="spawn-for-issue">
      <a class="button" href={`#/sessions?${query}`} data-testid="spawn-for-issue">
        Start a session on this issue
      </a>
    </p>
  );
}
