import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { hub } from './hub';

/** The harness names `trellis init --harness` takes, asked once. */
export const harnesses = signal<readonly string[]>([]);
let asked = false;
export function useHarnesses(): readonly string[] {
  useEffect(() => {
    if (asked) return;
    asked = true;
    void hub<{ harnesses: string[] }>('GET', 'hub/harnesses').then((a) => {
      if (a.status === 200) harnesses.value = a.body.harnesses;
    });
  }, []);
  return harnesses.value;
}

/** A harness name as the init choice shows it: `auto` says what it picks. */
export function harnessLabel(name: string): string {
  return name === 'auto' ? 'auto: the first agent installed, else shell' : name;
}
