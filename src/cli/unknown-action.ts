// Apart from usage-error.ts, which every command loads: the nearest-name search loads only with a verb.
import { didYouMean, nearestIds } from '../projections/nearest-names.js';
import { UsageError, usageLines } from './usage-error.js';

/**
 * An action a command does not have (issue 44): named with the nearest actions it does have, answered
 * with the usage of those, else of every action (`unknown issue action 'shwo'; did you mean 'show'?`).
 */
export function unknownAction(command: string, action: string, usages: Readonly<Record<string, string>>): UsageError {
  const near = nearestIds(action, Object.keys(usages));
  return new UsageError(`unknown ${command} action '${action}'${didYouMean(near)}`, usageLines((near.length ? near : Object.keys(usages)).map((a) => usages[a]!)));
}

/** Each action's usage line, from a table of action specs. */
export const usagesOf = (actions: Readonly<Record<string, { readonly usage: string }>>): Record<string, string> =>
  Object.fromEntries(Object.entries(actions).map(([name, spec]) => [name, spec.usage]));
