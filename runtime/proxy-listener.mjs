#!/usr/bin/env node
// Plain JavaScript (not compiled): it runs inside the sandbox from src/ and from dist/ alike.
/**
 * The catch-all proxy listener, run inside the sandbox's network namespace as
 * `node proxy-listener.js <port> <effect-log> <ready-file>` (the ready file is created once it listens): every connection a server makes through the proxy
 * variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) is logged as a `network` effect and refused with
 * 502. Nothing leaves the namespace.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

const port = Number(process.argv[2]);
const log = process.argv[3];
const ready = process.argv[4];
if (!port || !log) process.exit(2);

const server = createServer((socket) => {
  let seen = '';
  socket.setTimeout(5000, () => socket.destroy());
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    seen += chunk.toString('latin1');
    const end = seen.indexOf('\n');
    if (end === -1 && seen.length < 4096) return;
    // "CONNECT host:443 HTTP/1.1" or "GET http://host/path HTTP/1.1": the target is the evidence.
    const line = (end === -1 ? seen : seen.slice(0, end)).replace(/\r$/, '').replace(/[^\x20-\x7e]/g, '?').slice(0, 300);
    appendFileSync(log, `network\tproxy: ${line}\n`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    socket.removeAllListeners('data');
  });
});
server.listen(port, '127.0.0.1', () => {
  if (ready) writeFileSync(ready, '');
});
