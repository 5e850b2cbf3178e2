export * from './issue.js';
export * from './thread.js';
export * from './issue-list.js';
export * from './node-slice.js';
export * from './freshness.js';
export * from './spec-node.js';
export * from './board.js';
