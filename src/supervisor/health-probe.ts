import http from 'node:http';

/**
 * GET /health on a child's loopback port: whether it answered 2xx within `timeoutMs`. node:http rather than
 * fetch: this is the supervisor's only request at each start and reload, and fetch's first use loads undici
 * (about a third of the supervisor's start-up CPU in a profile).
 */
export function healthAnswers(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: timeoutMs }, (res) => {
      res.on('error', () => resolve(false));
      res.on('end', () => resolve(res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300));
      res.resume();
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
