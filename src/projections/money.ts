/**
 * Dollars as people read them (issue 42), the one formatter of every page, CLI line and wait reason that
 * shows money: two decimals, grouped (`$0.42`, `$1,234.50`), and a real cost below a cent as `< $0.01`,
 * never `$0.00` (nothing spent is `$0.00`). The exact figures stay in JSON and the API (`usd` numbers).
 */

// Made on first use: an Intl formatter costs milliseconds to build, and every CLI start loads this module
// (through the projections) while few verbs show money (issue 40's start-up budget).
let cents: Intl.NumberFormat | undefined;

/** `$0.42`, `$1,234.50`; `< $0.01` for a cost above nothing and below a cent; `$0.00` for nothing. */
export function dollars(usd: number): string {
  if (usd > 0 && usd < 0.01) return '< $0.01';
  cents ??= new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return cents.format(usd);
}

/** How many decimals a budget was written with, at least 2 (`0.8` → 2, `0.0222` → 4), at most 8. */
const decimalsOf = (usd: number): number => {
  for (let d = 2; d < 8; d++) if (Math.abs(usd * 10 ** d - Math.round(usd * 10 ** d)) < 1e-6) return d;
  return 8;
};

/** A budget (a setting, never rounded away): `$5.00`, `$0.80`, a finer one as written (`$0.0222`). */
export function budgetDollars(usd: number): string {
  const d = decimalsOf(usd);
  return usd.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: d, maximumFractionDigits: d });
}

/**
 * A cost said beside the budget it reached, to the budget's own decimals, so it never reads as under it
 * (`$0.0223` against `$0.0222`, where two decimals would say `$0.02`); against a budget in cents, as `dollars`.
 */
export function dollarsAgainst(usd: number, budget: number): string {
  const d = decimalsOf(budget);
  if (d === 2) return dollars(usd);
  return usd.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: d, maximumFractionDigits: d });
}
