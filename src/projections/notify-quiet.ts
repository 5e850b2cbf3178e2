/**
 * Quiet by choice (issue 32): a muted project, or the hub's quiet hours, tells nobody. Pure; the clock
 * and the time zone come from the caller.
 */

/** `HH:MM` from and to, in the gateway's local time; `to` before `from` spans midnight. */
export interface QuietHours {
  readonly from: string;
  readonly to: string;
}

export const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

const minutes = (hhmm: string): number => {
  const m = HHMM.exec(hhmm)!;
  return Number(m[1]) * 60 + Number(m[2]);
};

/** Whether the local time `hour:minute` falls inside `quiet` (from inclusive, to exclusive). */
export function inQuietHours(quiet: QuietHours | undefined, hour: number, minute: number): boolean {
  if (!quiet) return false;
  const t = hour * 60 + minute;
  const [from, to] = [minutes(quiet.from), minutes(quiet.to)];
  if (from === to) return false;
  return from < to ? t >= from && t < to : t >= from || t < to;
}
