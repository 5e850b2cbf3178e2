import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { ICON_SVG, iconPng, MANIFEST, SERVICE_WORKER } from './pwa-assets.js';

/** The installable app's files at the gateway's root, open to anyone (a browser fetches them without a login). */
export function pwaRoutes(): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const icons = new Map([192, 512].map((s) => [s, new Uint8Array(iconPng(s))]));
  app.get('/manifest.webmanifest', (c) => c.body(MANIFEST, 200, { 'Content-Type': 'application/manifest+json', 'Cache-Control': 'no-cache' }));
  // Never cached by HTTP: a new worker is picked up on the next visit.
  app.get('/sw.js', (c) => c.body(SERVICE_WORKER, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' }));
  app.get('/icon.svg', (c) => c.body(ICON_SVG, 200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400' }));
  for (const [size, png] of icons) app.get(`/icon-${size}.png`, (c) => c.body(png, 200, { 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=86400' }));
  return app;
}
