import { describe, expect, it } from 'vitest';
import { adapterOf, harnessNames } from './index.js';
import { lazyHarnessNames, loadAdapter } from './load-adapter.js';

describe('loadAdapter: one adapter loaded on demand, the same as adapterOf', () => {
  it('knows the same harnesses in the same order, gives the same adapter object, refuses an unknown one the same way', async () => {
    expect(lazyHarnessNames()).toEqual(harnessNames());
    for (const name of harnessNames()) expect(await loadAdapter(name)).toBe(adapterOf(name));
    const refusal = (() => {
      try {
        adapterOf('nope');
      } catch (err) {
        return err;
      }
    })();
    await expect(loadAdapter('nope')).rejects.toEqual(refusal);
    await expect(loadAdapter('toString')).rejects.toThrow(/unknown harness 'toString'/);
  });
});
