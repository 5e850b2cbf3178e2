/** One payload to append: the bytes of `event.json` and how the commit reads in `git log`. */
export interface LogRecord {
  readonly bytes: Uint8Array;
  readonly subject: string;
  readonly author: string;
  readonly at: Date;
}
