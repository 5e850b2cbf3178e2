import type { SessionView as Session } from '../../types';

/**
 * Whether the session's agent runs in a sandbox, said on its page (issue 45): "Sandboxed" with what
 * confines it, or "Not sandboxed" with why, so a person knows what the agent could reach before
 * answering it. Nothing before its first launch.
 */
export function Confinement({ c }: { c: Session['confinement'] }) {
  if (!c) return null;
  return c.confined ? (
    <span class="chip confined" data-testid="confinement" title={`Confined by ${c.by}`}>
      Sandboxed
    </span>
  ) : (
    <span class="chip problem" data-testid="confinement" title={`Not sandboxed: ${c.why}`}>
      Not sandboxed
    </span>
  );
}
