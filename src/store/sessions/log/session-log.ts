import { decideSession, describeSessionEvent, parseSessionEvent, type SessionCommand, type SessionEvent } from '../../../events/index.js';
// The projection's own module: the index also loads the spec-node parser and YAML (CLI start-up, issue 8).
import { evolveSession, initialSession, sessionLastKey, type SessionState } from '../../../projections/session.js';
import type { GitAppendLog } from '../../git/append-log.js';
import type { ProjectionCache } from '../../streams/projection-cache.js';
import type { StreamKind } from '../../streams/stream-kind.js';
import { refPrefixOf, streamRef } from '../../streams/stream-names.js';
import { StreamStore } from '../../streams/stream-store.js';

export const SESSION_REF_PREFIX = refPrefixOf('sessions');
export const sessionRef = (id: string): string => streamRef('sessions', id);

/** Agent sessions as a stream kind: one ref per session, spawned first, then every transition. */
export const sessionKind: StreamKind<SessionEvent, SessionState, SessionCommand> = {
  noun: 'session',
  refPrefix: SESSION_REF_PREFIX,
  firstEvent: 'spawned',
  initial: initialSession,
  evolve: evolveSession,
  parse: parseSessionEvent,
  decide: decideSession,
  describe: describeSessionEvent,
  exists: (state) => state.status !== 'absent',
  lastKey: sessionLastKey,
};

/** The session log: the one generic stream store, of the session kind. */
export class SessionLog extends StreamStore<SessionEvent, SessionState, SessionCommand> {
  constructor(log: GitAppendLog, cache: ProjectionCache<SessionState>) {
    super(sessionKind, log, cache);
  }
}
