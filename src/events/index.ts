export * from './errors.js';
export * from './thread-events.js';
export * from './thread-commands.js';
export * from './decide-thread.js';
export * from './node-links.js';
export * from './eval-events.js';
export * from './decide-eval.js';
