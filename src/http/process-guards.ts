/**
 * Last-resort guards (spec §1.1 rule 6): an unforeseen async throw is logged and the process keeps
 * serving. Installed once at start-up by the supervisor and by the child. A failure to bind the port is
 * not routed here: it is handled, loudly, where it happens.
 */
export function installProcessGuards(role: string): void {
  process.on('uncaughtException', (err) => {
    console.error(`trellis ${role}: uncaught exception (still serving): ${err?.stack ?? String(err)}`);
  });
  process.on('unhandledRejection', (reason) => {
    console.error(`trellis ${role}: unhandled rejection (still serving): ${(reason as Error)?.stack ?? String(reason)}`);
  });
}
