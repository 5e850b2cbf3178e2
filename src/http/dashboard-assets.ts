import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { MiddlewareHandler } from 'hono';
import { packageRoot } from '../store/package-root.js';

/** Where `npm run build` puts the dashboard bundle inside the installed package. */
export const dashboardDistDir = (): string => join(packageRoot().dir, 'dist', 'dashboard');

/**
 * The page's policy: scripts and styles only from this origin (no inline script anywhere), images from
 * here or data/blob URLs (evidence previews), nothing framed, no plugins. The one inline style allowed
 * is the empty one (its hash is sha256 of ""): xterm inserts `<style>` elements whose text the page keeps
 * in a constructed stylesheet instead (csp-styles.ts), so they stay empty; no style with content is.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

const COMMON = { 'Content-Security-Policy': DASHBOARD_CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

/** An asset name as Vite writes it: one path segment, no dot-files, nothing that could climb out. */
const ASSET = /\/assets\/([A-Za-z0-9][A-Za-z0-9._-]*)$/;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trellis: dashboard not built</title></head>
<body><h1>The dashboard is not built</h1><p>This Trellis package has no <code>dist/dashboard/index.html</code>.
Run <code>npm run build</code> (or <code>npm install</code>) in the Trellis package, then reload this page.
The HTTP API under <code>/api/</code> works meanwhile.</p></body></html>\n`;

/**
 * The dashboard page for one request path. Any path ending in `/assets/<name>` is a hashed asset (long
 * cache, immutable: its name changes whenever its bytes do); every other path is the page itself
 * (`index.html`, never cached, so a rebuild is picked up on the next load). The page routes with the URL
 * fragment and finds its API next to itself, so the same bundle works at `/` of `trellis serve` and under
 * any prefix a gateway mounts it at. A missing build is a 503 page that says how to build it.
 */
export async function dashboardResponse(distDir: string, path: string): Promise<Response> {
  const asset = ASSET.exec(path);
  if (asset) {
    const name = asset[1]!;
    const bytes = await cachedAsset(join(distDir, 'assets', name));
    if (!bytes) return new Response(`no dashboard asset ${name}; the page may be older than the build: reload it\n`, { status: 404, headers: { ...COMMON, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' } });
    return new Response(bytes, { status: 200, headers: { ...COMMON, 'Content-Type': TYPES[extname(name)] ?? 'application/octet-stream', 'Cache-Control': 'public, max-age=31536000, immutable' } });
  }
  let html: Buffer;
  try {
    html = await readFile(join(distDir, 'index.html'));
  } catch {
    return new Response(NOT_BUILT, { status: 503, headers: { ...COMMON, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' } });
  }
  return new Response(new Uint8Array(html), { status: 200, headers: { ...COMMON, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' } });
}

// Hashed names never change content, so a read is kept for the life of the process (the bundle is small).
const assets = new Map<string, Uint8Array<ArrayBuffer>>();
async function cachedAsset(file: string): Promise<Uint8Array<ArrayBuffer> | null> {
  const hit = assets.get(file);
  if (hit) return hit;
  try {
    if (!(await stat(file)).isFile()) return null;
    const bytes = new Uint8Array(await readFile(file));
    assets.set(file, bytes);
    return bytes;
  } catch {
    return null;
  }
}

/**
 * Hono middleware serving the dashboard from `distDir` for GET/HEAD of its page and assets that `isApi`
 * does not claim (by default: `/api`, `/api/...` and `/health`); everything else falls through.
 */
export function dashboardAssets(distDir: string, isApi: (path: string) => boolean = defaultIsApi): MiddlewareHandler {
  return async (c, next) => {
    if ((c.req.method !== 'GET' && c.req.method !== 'HEAD') || isApi(c.req.path) || !isDashboardPath(c.req.path)) return next();
    const res = await dashboardResponse(distDir, c.req.path);
    return c.req.method === 'HEAD' ? new Response(null, { status: res.status, headers: res.headers }) : res;
  };
}

/**
 * The page lives at a folder (`/`, `/p/<id>/`, or its `index.html`) and routes with the fragment; its
 * assets are `<folder>/assets/<name>`. Any other path is not the dashboard's: it gets the API's JSON 404,
 * never the page, so a mistyped or hostile API path can never look like a successful answer.
 */
export const isDashboardPath = (path: string): boolean => path.endsWith('/') || path.endsWith('/index.html') || ASSET.test(path);

const defaultIsApi = (path: string) => path === '/health' || path === '/api' || path.startsWith('/api/');
