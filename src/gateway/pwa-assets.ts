import { deflateSync } from 'node:zlib';

/**
 * The installable app's files, served by the gateway at its root (a service worker controls the paths
 * below its own, so it lives at `/sw.js`): the manifest, the worker that shows pushed notifications, and
 * the icons. Written here rather than built: a few lines each, the same at every hub.
 */

export const MANIFEST = JSON.stringify({
  name: 'Trellis',
  short_name: 'Trellis',
  description: 'Your projects, their sessions, and the agents that need you',
  start_url: '/#/inbox',
  scope: '/',
  display: 'standalone',
  background_color: '#ffffff',
  theme_color: '#2f6f4f',
  icons: [
    { src: '/icon.svg', sizes: 'any', type: 'image/svg+xml' },
    { src: '/icon-192.png', sizes: '192x192', type: 'image/png' },
    { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any maskable' },
  ],
});

/**
 * The service worker: a push shows the wait (tagged with the wait's key, so a repeat replaces it) with the
 * actions the push carries (the two most likely answers, for a login that may answer) and "Open" where the
 * browser shows a third button (Chrome shows two: a tap on the notification opens it); a
 * withdraw replaces it (same tag, no answers left to tap) with what ended the wait: who answered it, or
 * that the agent moved on with nobody answering — ntfy's replaced notification's words. An answer action posts
 * the option's name to `/waits/<wait>/answer` with the login's cookie, once: the notification is replaced
 * first by "answering…" (no actions left to tap again), then by what the gateway said — the agent's next
 * state, or why nothing was answered ("already answered: Yes, from ntfy at 14:02"). Those words stay: a
 * withdraw that follows does not close them. A click (or "Open") opens the session's page; for a question
 * without fixed options, with its answer box focused. `answerFromNotification` is the click's own path,
 * named so a test drives it as the click does.
 */
export const SERVICE_WORKER = `'use strict';
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
const OPEN = { action: 'open', title: 'Open' };
// A browser shows at most maxActions buttons (Chrome: 2): the answers first, "Open" when there is room
// (a tap on the notification itself always opens the session).
const ROOM = (self.Notification && self.Notification.maxActions) || 2;
const withOpen = (actions) => (actions.length < ROOM ? actions.concat([OPEN]) : actions.slice(0, ROOM));
const show = (tag, title, body, data, actions) =>
  self.registration.showNotification(title, { body, tag, icon: '/icon-192.png', data, actions: actions || [] });
self.addEventListener('push', (e) => {
  let d;
  try { d = e.data.json(); } catch { return; }
  if (d.type === 'withdraw') {
    e.waitUntil(self.registration.getNotifications({ tag: d.id }).then((ns) => Promise.all(ns.map((n) => {
      if (n.data && n.data.final) return undefined;
      if (d.answered) return show(d.id, n.title, 'already answered: ' + d.answered.option + ', from ' + d.answered.from + ' at ' + d.answered.at, { path: d.path, final: true }, withOpen([]));
      // Nobody answered: the agent moved on (ntfy's replaced notification says the same words).
      return show(d.id, n.title, 'the agent moved on' + (d.ended && d.ended.at ? ' at ' + d.ended.at : '') + ': nothing to answer', { path: d.path, final: true }, withOpen([]));
    }))));
    return;
  }
  const what = d.type === 'turn-end' ? 'its turn ended' : d.waitsFor;
  const options = d.options || [];
  const question = d.type === 'wait' && !options.length && /question/.test(d.waitsFor);
  e.waitUntil(show(d.id, d.session.title + ': ' + what, d.project.name + ' · an agent needs you',
    { path: d.path, wait: d.wait, options, question }, withOpen(d.actions || [])));
});
self.answerFromNotification = (n, action) => {
  const d = n.data || {};
  const option = (d.options || [])[Number(action.slice('answer:'.length))];
  const after = (title, body) => show(n.tag, title, body, { path: d.path, final: true }, withOpen([]));
  if (!d.wait || option === undefined || d.final) return after(n.title, 'nothing was answered: this notification offers no such answer now');
  return show(n.tag, n.title, 'answering \u201c' + option + '\u201d\u2026', { path: d.path, final: true }, [])
    .then(() => fetch('/waits/' + encodeURIComponent(d.wait) + '/answer', {
      method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ option }),
    }))
    .then((r) => r.json().catch(() => ({})).then((j) => r.ok
      ? after('Answered: ' + option, j.message || 'answered')
      : after(n.title, (j.error && j.error.message) || ('nothing was answered (the gateway said ' + r.status + ')'))))
    .catch((err) => after(n.title, 'nothing was answered: the gateway could not be reached (' + err.message + ')'));
};
self.addEventListener('notificationclick', (e) => {
  if (e.action && e.action.startsWith('answer:')) {
    e.waitUntil(self.answerFromNotification(e.notification, e.action));
    return;
  }
  e.notification.close();
  const data = e.notification.data || {};
  const url = new URL(data.path + (data.question ? '?answer=1' : ''), self.location.origin).href;
  e.waitUntil(self.clients.matchAll({ type: 'window' }).then((ws) => {
    const w = ws.find((c) => 'navigate' in c);
    return w ? w.navigate(url).then((c) => c && c.focus()) : self.clients.openWindow(url);
  }));
});
`;

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#2f6f4f"/><path d="M20 14v36M32 14v36M44 14v36M14 24h36M14 40h36" stroke="#fff" stroke-width="4" stroke-linecap="round"/></svg>`;

/** A square PNG of `size` px: the trellis mark (white bars on green), drawn row by row. */
export function iconPng(size: number): Buffer {
  const green = [0x2f, 0x6f, 0x4f];
  const rows: Buffer[] = [];
  const bar = (v: number) => [20, 32, 44].some((c) => Math.abs(v - c) <= 2);
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x++) {
      const [u, v] = [(x * 64) / size, (y * 64) / size];
      const inner = u > 12 && u < 52 && v > 12 && v < 52;
      const white = inner && (bar(u) || (v > 22 && v < 26) || (v > 38 && v < 42));
      const px = white ? [255, 255, 255] : green;
      row.set(px, 1 + x * 3);
    }
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
