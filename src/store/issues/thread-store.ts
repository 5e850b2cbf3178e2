import { crypto } from '../lazy-builtins.js';
import { decideThread, describeEvent, parseThreadEvent, TrellisError, type ThreadCommand, type ThreadEvent } from '../../events/index.js';
import { evolveThread, initialThread, threadLastKey, type ThreadState } from '../../projections/thread.js';
import type { GitAppendLog } from '../git/append-log.js';
import { newThreadId } from '../project/ids.js';
import type { ProjectionCache } from '../streams/projection-cache.js';
import type { StreamKind } from '../streams/stream-kind.js';
import { refPrefixOf, streamRef } from '../streams/stream-names.js';
import { StreamStore, type DecidedStep, type StreamsRead } from '../streams/stream-store.js';

export const THREAD_REF_PREFIX = refPrefixOf('issues');
export const threadRef = (id: string): string => streamRef('issues', id);

/** Local issue threads as a stream kind: one ref per thread, opened first, then replies and the rest. */
export const threadKind: StreamKind<ThreadEvent, ThreadState, ThreadCommand> = {
  noun: 'thread',
  refPrefix: THREAD_REF_PREFIX,
  firstEvent: 'opened',
  initial: initialThread,
  evolve: evolveThread,
  parse: parseThreadEvent,
  decide: decideThread,
  describe: (event, before) => describeEvent(event, before?.replyIds),
  exists: (state) => state.status !== 'absent',
  lastKey: threadLastKey,
};

export type ThreadsRead = StreamsRead<ThreadState>;

/** Local issue threads over a git append log: the generic stream store of the thread kind. */
export class ThreadStore extends StreamStore<ThreadEvent, ThreadState, ThreadCommand> {
  constructor(log: GitAppendLog, cache: ProjectionCache<ThreadState>) {
    super(threadKind, log, cache);
  }

  /** Every command's events get a fresh random id (format v2): unique across clones, kept on retries. */
  override write(id: string, command: ThreadCommand): Promise<{ state: ThreadState; events: ThreadEvent[] }> {
    return super.write(id, command.eventId ? command : { ...command, eventId: newThreadId((n) => crypto().randomBytes(n)) });
  }

  /**
   * Decides and appends holding the thread ref's lock from the read of its tip to the append, so no
   * writer in any process moves the thread in between: `prepare` turns the state there into the command
   * and may call out first (promote creates the forge issue in it, so a thread is promoted once whatever
   * the processes). Other writers of the thread wait for the lock meanwhile (TRELLIS_LOCK_WAIT_MS).
   */
  async writeLocked(id: string, prepare: (state: ThreadState) => Promise<ThreadCommand>): Promise<{ state: ThreadState; events: ThreadEvent[] }> {
    let step: DecidedStep<ThreadState, ThreadEvent> | undefined;
    await this.log.swapUnderLock(this.ref(id), async (tip) => {
      const command = await prepare(this.stateOrThrow(await this.snapshotAt(id, tip), id));
      step = await this.decideAt(id, tip, command.eventId ? command : { ...command, eventId: newThreadId((n) => crypto().randomBytes(n)) });
      return step.next;
    });
    if (!step) throw new TrellisError('APPEND_CONFLICT', `${this.ref(id)} could not be read under its lock; try again`);
    if (step.next === null) return { state: step.state, events: step.events };
    return this.appended(id, step);
  }
}
