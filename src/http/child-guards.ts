import { installProcessGuards } from './process-guards.js';

// Imported first by child-main: ES modules evaluate in import order, so the guards are in place before
// the app's module graph (Hono, git, the dashboard handler) has loaded, not after it.
installProcessGuards(`child ${process.env.TRELLIS_CHILD_ID ?? ''}`.trim());
