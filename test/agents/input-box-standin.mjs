#!/usr/bin/env node
// A stand-in screen for the input lane (store/sessions/verbs/delivery.ts): Claude Code's input box as its
// screens are read (`❯` between two rules), in raw mode with bracketed paste, so what the lane sees and
// types is exact. Every byte it receives is appended to argv[2]; each line submitted with Enter to
// argv[2].submitted. Modes (argv[3]):
//   empty            an empty input box
//   restored         the box holds "restored text" (as Claude Code puts an interrupted prompt back)
//   dialog           a permission dialog instead of the box
//   dialog-on-paste  an empty box; as a paste starts arriving a permission dialog takes the screen
import { appendFileSync } from 'node:fs';

const [out, mode] = process.argv.slice(2);
let text = mode === 'restored' ? 'restored text' : '';
let dialog = mode === 'dialog';
const rule = '─'.repeat(40);
function draw() {
  if (dialog) process.stdout.write('\x1b[2J\x1b[H Bash command\r\n Do you want to proceed?\r\n ❯ No\r\n   Yes\r\n\r\n Esc to cancel\r\n');
  else process.stdout.write(`\x1b[2J\x1b[H${rule}\r\n❯ ${text}\r\n${rule}\x1b[2A\r\x1b[${3 + text.length}C`);
}
process.stdin.setRawMode(true);
process.stdout.write('\x1b[?2004h');
draw();
process.stdin.on('data', (d) => {
  appendFileSync(out, d);
  let s = d.toString('utf8');
  if (mode === 'dialog-on-paste' && s.includes('\x1b[200~')) dialog = true;
  if (!dialog) {
    s = s.replace(/\x1b\[20[01]~/g, '');
    for (const ch of s) {
      if (ch === '\x15') text = '';
      else if (ch === '\r') {
        appendFileSync(`${out}.submitted`, `${text}\n`);
        text = '';
      } else if (ch >= ' ') text += ch;
    }
  }
  draw();
});
