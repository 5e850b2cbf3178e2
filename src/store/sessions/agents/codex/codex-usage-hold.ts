/**
 * Codex's `thread/tokenUsage/updated`, held for a moment (issue 41: a Codex event's Trellis CPU). The
 * update says only that Codex wrote a response's figures to its rollout; what the session records is
 * read from the rollout by whichever signal comes next (every signal reads the usage record up to where
 * it ends, signal-verb.ts). Codex sends the update just before the turn's `turn/completed` (23 ms apart
 * in the recording) or an approval, so recorded on its own it was a whole log append (objects, fsyncs,
 * compare-and-swap) that the next signal's append would have carried. Held, that next signal records
 * the usage and its own transition in one append. An update that nothing follows within `ms` (a long
 * tool call after a response) is recorded on its own, so a budget is still checked within `ms`.
 */
export class UsageHold {
  private timer: NodeJS.Timeout | null = null;
  private held: unknown = null;
  /** Updates recorded by the next signal's append instead of one of their own. */
  carried = 0;

  constructor(
    private readonly ms: number,
    private readonly record: (payload: unknown) => void,
  ) {}

  /** An update: held until the next signal or `ms`, whichever is first (several updates meanwhile: one; `ms` 0: none held). */
  hold(payload: unknown): void {
    if (this.ms <= 0) return this.record(payload);
    this.held = payload;
    this.timer ??= setTimeout(() => this.release(), this.ms);
  }

  /** Another signal is about to be recorded: it reads the same usage, so a held update is carried by it. */
  carry(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.held = null;
    this.carried++;
  }

  /** Records a held update on its own now (its time is up, or the watcher ends). */
  release(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    const payload = this.held;
    this.held = null;
    this.record(payload);
  }
}
