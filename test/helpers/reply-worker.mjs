// A separate writer process for the concurrency tests: replies to threads round-robin through the same
// verb the CLI and HTTP routes call. Usage: node reply-worker.mjs <cwd> <tag> <count> <id>...
import { replyToIssue } from '../../dist/src/store/issues/verbs.js';
import { openProject } from '../../dist/src/store/compose/open-project.js';

const [cwd, tag, count, ...ids] = process.argv.slice(2);
const project = openProject(cwd);
for (let i = 0; i < Number(count); i++) {
  await replyToIssue(project, ids[i % ids.length], { body: `${tag}-${i}`, by: tag });
}
