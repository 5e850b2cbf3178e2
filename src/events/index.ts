export * from './errors.js';
export * from './thread-events.js';
export * from './thread-commands.js';
export * from './decide-thread.js';
export * from './node-links.js';
export * from './session-events.js';
export * from './session-commands.js';
export * from './decide-session.js';
