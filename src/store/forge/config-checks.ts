import { TrellisError } from '../../events/index.js';
import type { ForgeConfig } from '../project/config.js';

// The config checks a driver's constructor makes, apart from the driver so the slice makes them too
// without loading it (lazy-driver.ts).

export function checkGitlabProject(config: ForgeConfig): void {
  if (!/^([1-9][0-9]*|[\w.-]+(\/[\w.-]+)+)$/.test(config.repo)) {
    throw new TrellisError('INVALID_INPUT', `forge ${config.host}: "project" must be a project id or its path (group/name), not ${JSON.stringify(config.repo)}`);
  }
}

export function checkOwnerName(config: ForgeConfig): void {
  if (!/^[\w.-]+\/[\w.-]+$/.test(config.repo)) throw new TrellisError('INVALID_INPUT', `forge ${config.host}: "repo" must be owner/name, not ${JSON.stringify(config.repo)}`);
}
