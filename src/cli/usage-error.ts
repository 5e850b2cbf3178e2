/** Misuse of the command line: exit 2 with the usage of the verb. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** Usage lines as `usage:` prints them: one inline, several each on a line of its own. */
export const usageLines = (lines: readonly string[]): string => (lines.length === 1 ? lines[0]! : `\n${lines.map((l) => `  ${l}`).join('\n')}`);
