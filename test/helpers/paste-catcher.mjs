// A stand-in agent for prompt delivery: it asks for bracketed paste (as Claude Code and other TUIs do),
// reads its terminal raw, and writes the bytes it received between the paste markers to argv[2] byte for
// byte; the Enter that follows the paste (a separate keystroke) completes it: argv[2].done is written.
import { writeFileSync } from 'node:fs';

const out = process.argv[2];
process.stdin.setRawMode(true);
process.stdout.write('\x1b[?2004h');
process.stdout.write('CATCHER-READY\r\n');
let buf = Buffer.alloc(0);
let count = 0;
process.stdin.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  const start = buf.indexOf('\x1b[200~');
  const end = buf.indexOf('\x1b[201~');
  if (start < 0 || end < start) return;
  const after = buf.subarray(end + 6);
  if (!after.includes(0x0d)) return;
  count++;
  writeFileSync(`${out}.${count}`, buf.subarray(start + 6, end));
  writeFileSync(`${out}.${count}.done`, after);
  process.stdout.write(`GOT-${count}\r\n`);
  buf = Buffer.alloc(0);
});
