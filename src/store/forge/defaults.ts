/**
 * Each driver's documented defaults (README, "Forge issues"): the API root a forge entry without
 * `apiUrl` is asked at, and the variable a token is read from without `tokenEnv`. The drivers and the
 * trust rule (trust.ts) read them here, so a default the rule lets through is the one a driver uses.
 */
export const FORGE_DEFAULTS: Readonly<Record<string, { readonly apiUrl: (host: string) => string; readonly tokenEnv: string }>> = {
  github: { apiUrl: () => 'https://api.github.com', tokenEnv: 'GITHUB_TOKEN' },
  gitlab: { apiUrl: (host) => `https://${host}/api/v4`, tokenEnv: 'GITLAB_TOKEN' },
  forgejo: { apiUrl: (host) => `https://${host}/api/v1`, tokenEnv: 'FORGEJO_TOKEN' },
  gitea: { apiUrl: (host) => `https://${host}/api/v1`, tokenEnv: 'FORGEJO_TOKEN' },
};
