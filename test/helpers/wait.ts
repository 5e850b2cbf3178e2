/** Polls `check` until it returns something other than undefined/false (bounded), never a fixed sleep. */
export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const began = Date.now();
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Rest as long as the check took (20 ms to 1 s): a check that runs a process must not take the CPU
    // back to back from what is being waited on (the suite is CPU-bound on 2 cores).
    await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(20, Date.now() - began))));
  }
}
