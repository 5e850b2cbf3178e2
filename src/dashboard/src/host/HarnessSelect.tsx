import { harnessLabel, useHarnesses } from './harnesses';

/** The harness choice for `trellis init` (Register, a project's Run init): `blank` names what the empty choice means there. */
export function HarnessSelect({ value, onChange, blank }: { value: string; onChange: (harness: string) => void; blank: string }) {
  const names = useHarnesses();
  return (
    <select value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
      <option value="">{blank}</option>
      {names.map((n) => (
        <option value={n} key={n}>
          {harnessLabel(n)}
        </option>
      ))}
    </select>
  );
}
