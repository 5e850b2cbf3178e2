import { decideEval, describeEvalEvent, parseEvalEvent, type EvalCommand, type EvalEvent } from '../../events/index.js';
// The projection's own module: the index also loads the spec-node parser and YAML (CLI start-up, issue 8).
import { evalLastKey, evolveEval, initialEval, type EvalState } from '../../projections/eval-readings.js';
import type { GitAppendLog } from '../git/append-log.js';
import type { ProjectionCache } from '../streams/projection-cache.js';
import type { StreamKind } from '../streams/stream-kind.js';
import { refPrefixOf } from '../streams/stream-names.js';
import { StreamStore, type StreamsRead } from '../streams/stream-store.js';

export const EVAL_REF_PREFIX = refPrefixOf('evals');

/** Eval readings as a stream kind: one ref per scenario (named by its ref key), one `measured` event per reading. */
export const evalKind: StreamKind<EvalEvent, EvalState, EvalCommand> = {
  noun: 'scenario',
  refPrefix: EVAL_REF_PREFIX,
  firstEvent: 'measured',
  initial: initialEval,
  evolve: evolveEval,
  parse: parseEvalEvent,
  decide: decideEval,
  describe: describeEvalEvent,
  exists: (state) => state.readings.length > 0,
  lastKey: evalLastKey,
};

export type EvalsRead = StreamsRead<EvalState>;

/** Every scenario's readings over a git append log: the generic stream store of the eval kind. */
export class EvalStore extends StreamStore<EvalEvent, EvalState, EvalCommand> {
  constructor(log: GitAppendLog, cache: ProjectionCache<EvalState>) {
    super(evalKind, log, cache);
  }
}
