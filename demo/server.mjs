#!/usr/bin/env node
// sealmark demo server: a tiny notes server over stdio (MCP, JSON-RPC, newline-delimited) with
// planted flaws, for `sealmark` to find. No dependencies beyond node: builtins.
//
// Planted flaws:
//   search_notes(query: string required, limit: integer 1..50)  — none: validates every argument
//       and rejects invalid input with isError:true naming the parameter (the good example).
//   get_note(id: string required)       — crashes on `{}` (and null): the error text is the raw
//       "TypeError: Cannot read properties of undefined (reading 'toLowerCase')"   -> internal-error
//   add_note(title: string required, body: string) — no validation at all: accepts anything,
//       including {} and wrong types, and "saves" the note (in memory)            -> accepted
//   list_tags()                         — none: no arguments, readOnlyHint:true, returns the tags.
//   list_recent(count: integer 0..20)   — validates count properly, then reads it as
//       `count || notes.size`: 0 returns every note, not none                  -> zero means unlimited
//   server_info()                       — read-only, no arguments; "for debugging" it returns the
//       whole process environment, secrets included                              -> secret-echo
//   open_dashboard()                    — opens http://127.0.0.1:8767 in a browser (xdg-open, or
//       open on macOS) on EVERY call, including the {} a router sends       -> default-call-effects
//       and it states no annotations at all, so clients must assume it writes  -> annotations
//       (inside sealmark's sandbox the command is a logging shim: nothing opens)
//   render_note(id: string)             — rejects a non-string id, but its error text includes a
//       stack frame "at renderNote (/home/demo/notes/render.js:12:7)"             -> leak
//       and it reads a null id as "absent", so {"id": null} succeeds              -> accepted
//
// The handshake accepts protocol versions 2024-11-05 .. 2025-11-25; the process exits when stdin closes.
import { spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

const notes = new Map([
  ['n1', { title: 'Groceries', body: 'eggs, milk, coffee', tags: ['home'] }],
  ['n2', { title: 'Release checklist', body: 'tag, build, publish', tags: ['work'] }],
  ['n3', { title: 'Book ideas', body: 'a lighthouse keeper who audits ships', tags: ['ideas', 'home'] }],
]);

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const fail = (t) => ({ content: [{ type: 'text', text: t }], isError: true });
const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const tools = [
  {
    name: 'search_notes',
    description: 'Searches notes by a text query.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'get_note',
    description: 'Returns one note by id.',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add_note',
    description: 'Adds a note.',
    inputSchema: {
      type: 'object',
      properties: { title: { type: 'string' }, body: { type: 'string' } },
      required: ['title'],
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  {
    name: 'list_tags',
    description: 'Lists all tags in use.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'list_recent',
    description: 'Lists the most recent notes, newest first.',
    inputSchema: { type: 'object', properties: { count: { type: 'integer', minimum: 0, maximum: 20 } }, required: ['count'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'server_info',
    description: 'Returns version and runtime details, for debugging.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'open_dashboard',
    description: 'Returns the URL of the notes dashboard.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'render_note',
    description: 'Renders a note as Markdown.',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
];

const handlers = {
  search_notes(args) {
    const extra = Object.keys(args).find((k) => k !== 'query' && k !== 'limit');
    if (extra) return fail(`Invalid arguments: unexpected parameter "${extra}"`);
    if (!('query' in args)) return fail('Invalid arguments: missing required parameter "query"');
    if (typeof args.query !== 'string') return fail(`Invalid arguments: parameter "query" must be a string, got ${kind(args.query)}`);
    if ('limit' in args) {
      if (!Number.isInteger(args.limit)) return fail(`Invalid arguments: parameter "limit" must be an integer, got ${kind(args.limit)}`);
      if (args.limit < 1 || args.limit > 50) return fail('Invalid arguments: parameter "limit" must be between 1 and 50');
    }
    const q = args.query.toLowerCase();
    const hits = [...notes].filter(([, n]) => `${n.title} ${n.body}`.toLowerCase().includes(q)).slice(0, args.limit ?? 10);
    return text(hits.length ? hits.map(([id, n]) => `${id}: ${n.title}`).join('\n') : 'no notes found');
  },
  get_note(args) {
    // Flaw: no check that `id` exists or is a string.
    try {
      const key = args.id.toLowerCase();
      const note = notes.get(key);
      return note ? text(`# ${note.title}\n\n${note.body}`) : fail(`note ${args.id} not found`);
    } catch (e) {
      return fail(String(e));
    }
  },
  add_note(args) {
    // Flaw: stores whatever it is given.
    const id = `n${notes.size + 1}`;
    notes.set(id, { title: args.title, body: args.body, tags: [] });
    return text(`added note ${id}: ${JSON.stringify(args)}`);
  },
  list_tags() {
    return text([...new Set([...notes.values()].flatMap((n) => n.tags ?? []))].sort().join(', '));
  },
  list_recent(args) {
    if (!Number.isInteger(args.count) || args.count < 0 || args.count > 20) {
      return fail(`Invalid arguments: parameter "count" must be an integer from 0 to 20, got ${JSON.stringify(args.count ?? null)}`);
    }
    // Flaw: a falsy count falls back to "all", so 0 admits everything instead of nothing.
    const n = args.count || notes.size;
    return text([...notes].reverse().slice(0, n).map(([id, note]) => `${id}: ${note.title}`).join('\n'));
  },
  server_info() {
    // Flaw: "runtime details" includes every environment variable, API keys and all.
    return text(JSON.stringify({ name: 'sealmark-demo-notes', node: process.version, env: process.env }, null, 2));
  },
  open_dashboard() {
    // Flaw: the default call has a side effect (the seed's show_dashboard).
    const url = 'http://127.0.0.1:8767';
    spawnSync(process.platform === 'darwin' ? 'open' : 'xdg-open', [url], { stdio: 'ignore', timeout: 5000 });
    return text(JSON.stringify({ ok: true, url }));
  },
  render_note(args) {
    const id = args.id ?? 'n1';
    if (typeof id !== 'string') {
      // Flaw: the stack trace goes to the client.
      return fail(
        `Error: parameter "id" must be a string, got ${kind(id)}\n` +
          '    at renderNote (/home/demo/notes/render.js:12:7)\n' +
          '    at handleCall (/home/demo/notes/server.js:88:14)',
      );
    }
    const note = notes.get(id);
    return note ? text(`# ${note.title}\n\n${note.body}\n`) : fail(`note ${id} not found`);
  },
};

const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const error = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });

function onRequest({ id, method, params }) {
  switch (method) {
    case 'initialize': {
      const asked = params?.protocolVersion;
      return send({
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS.at(-1),
          capabilities: { tools: {} },
          serverInfo: { name: 'sealmark-demo-notes', version: '1.0.0' },
        },
      });
    }
    case 'ping':
      return send({ jsonrpc: '2.0', id, result: {} });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id, result: { tools } });
    case 'tools/call': {
      if (!params || typeof params !== 'object' || Array.isArray(params)) return error(id, -32602, 'Invalid params');
      const handler = handlers[params.name];
      if (!handler) return error(id, -32602, `Unknown tool: ${params.name}`);
      const args = params.arguments && typeof params.arguments === 'object' ? params.arguments : {};
      return send({ jsonrpc: '2.0', id, result: handler(args) });
    }
    default:
      return error(id, -32601, `Method not found: ${method}`);
  }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return error(null, -32700, 'Parse error');
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return error(null, -32600, 'Invalid Request');
  if (typeof msg.method !== 'string') return; // a response, or junk without a method
  if (msg.id === undefined) return; // notifications are ignored
  onRequest(msg);
});
rl.on('close', () => process.stdout.write('', () => process.exit(0)));
process.stdout.on('error', () => process.exit(0));
