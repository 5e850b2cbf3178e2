/**
 * Named points in the supervisor's life where a test can stop it deterministically, instead of aiming a
 * signal by timing luck. With `TRELLIS_TEST_PAUSE=<point>[#n],…` the supervisor, reaching the n-th
 * occurrence of a listed point (the first without `#n`), logs `test pause at <point>#<n>` and waits there
 * until a stop is asked for, then goes on: the test sends its signal while the supervisor stands at
 * that point. Without the variable every point is a no-op.
 *
 * Points: `first-boot` (the first child up, before the public port), `record-write` (inside an
 * endpoint-record write: its temporary file exists, the rename has not happened), `reload-booted` (a new
 * child healthy, not yet switched to), `switched` (switched, the old child not yet draining),
 * `replace` (a dead child noticed, its replacement not yet booting).
 */
export class TestPauses {
  private readonly wanted: ReadonlyMap<string, number>;
  private readonly seen = new Map<string, number>();

  constructor(
    spec: string | undefined,
    private readonly log: (line: string) => void,
    private readonly stopAsked: Promise<void>,
  ) {
    const wanted = new Map<string, number>();
    for (const item of (spec ?? '').split(',').filter(Boolean)) {
      const [point, n] = item.split('#');
      wanted.set(point!, n === undefined ? 1 : Number(n));
    }
    this.wanted = wanted;
  }

  /** Waits at `point` if it is the wanted occurrence of a listed point; resolves at once otherwise. */
  async at(point: string): Promise<void> {
    const want = this.wanted.get(point);
    if (want === undefined) return;
    const n = (this.seen.get(point) ?? 0) + 1;
    this.seen.set(point, n);
    if (n !== want) return;
    this.log(`test pause at ${point}#${n}`);
    await this.stopAsked;
  }
}
