/** Where the agent's own first-run state is checked: the main checkout it will work in, and its environment. */
export interface PreflightContext {
  /** The project's main checkout (agents key trust by it; one acceptance covers its worktrees). */
  readonly mainRoot: string;
  /** The environment the agent will run with (HOME, PATH, its keys). */
  readonly env: NodeJS.ProcessEnv;
}
