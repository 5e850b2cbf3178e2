import { describe, expect, it } from 'vitest';
import { budgetDollars, dollars, dollarsAgainst } from './money.js';

describe('money for people', () => {
  it('two decimals, grouped; a real cost below a cent is "< $0.01", never "$0.00"', () => {
    expect([0.42, 0.5, 1.005, 2, 1234.5, 0.0123, 0.00001, 0.0099, 0.01, 0].map(dollars)).toEqual(['$0.42', '$0.50', '$1.01', '$2.00', '$1,234.50', '$0.01', '< $0.01', '< $0.01', '$0.01', '$0.00']);
  });

  it('a budget as written: cents as cents, a finer one to its own decimals', () => {
    expect([5, 0.8, 0.0222, 0.0345, 1500].map(budgetDollars)).toEqual(['$5.00', '$0.80', '$0.0222', '$0.0345', '$1,500.00']);
  });

  it('a cost beside the budget it reached never reads as under it', () => {
    expect(dollarsAgainst(0.02234, 0.0222)).toBe('$0.0223');
    expect(dollarsAgainst(0.0222, 0.0222)).toBe('$0.0222');
    expect(dollarsAgainst(0.0312, 0.03)).toBe('$0.03');
    expect(dollarsAgainst(0.004, 0.8)).toBe('< $0.01');
  });
});
