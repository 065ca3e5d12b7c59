import { describe, expect, it } from 'vitest';
// The check registry registers sealmark's own identifiers with the redactor.
import '../../src/checks/index.js';
import { Redactor } from '../../src/redact.js';
import { safeText } from '../../src/report/reporters/text.js';

describe('Redactor (SPEC section 8)', () => {
  const r = new Redactor({ API_KEY: 'sk-live-"quoted"\\path', SHORT: 'on', TOKEN: 'tok-123456' });

  it('replaces every plain occurrence with the key name', () => {
    expect(r.text('key=tok-123456; again tok-123456')).toBe('key=[redacted:TOKEN]; again [redacted:TOKEN]');
  });

  it('finds a secret with quotes and backslashes inside nested strings', () => {
    expect(r.value({ text: ['the key is sk-live-"quoted"\\path'] })).toEqual({ text: ['the key is [redacted:API_KEY]'] });
  });

  it('never breaks the structure: a secret equal to a JSON token is only replaced inside strings', () => {
    const o = new Redactor({ MODE: 'lenient-mode-2', FLAG_TOKEN: 'isError' });
    expect(o.value({ isError: true, text: 'lenient-mode-2 isError' })).toEqual({ '[redacted:FLAG_TOKEN]': true, text: '[redacted:MODE] [redacted:FLAG_TOKEN]' });
  });

  it('deep-copies a value with secrets redacted, and leaves values under 4 characters alone', () => {
    const v = r.value({ a: ['tok-123456'], b: { c: 'on and on' } });
    expect(v).toEqual({ a: ['[redacted:TOKEN]'], b: { c: 'on and on' } });
  });

  it('redacts the longer of two overlapping secrets whole', () => {
    const o = new Redactor({ A_TOKEN: 'secret', B_TOKEN: 'secret-long' });
    expect(o.text('x secret-long y secret')).toBe('x [redacted:B_TOKEN] y [redacted:A_TOKEN]');
  });
});

describe('safeText: server text on a terminal', () => {
  it("never touches sealmark's own identifiers, only the server's text", () => {
    const o = new Redactor({ API_KEY: 'bounded' });
    expect(o.value({ id: 'bounded-limits', checkId: 'bounded-limits', message: 'bounded value' })).toEqual({ id: 'bounded-limits', checkId: 'bounded-limits', message: '[redacted:API_KEY] value' });
  });

  it("redacts a server's data under the same keys (structuredContent.id is not sealmark's)", () => {
    const o = new Redactor({ API_TOKEN: 'hunter2-very-secret-value' });
    expect(o.value({ structuredContent: { id: 'hunter2-very-secret-value', status: 'x hunter2-very-secret-value' } })).toEqual({ structuredContent: { id: '[redacted:API_TOKEN]', status: 'x [redacted:API_TOKEN]' } });
  });

  it('hides a secret cut short at either end of a text, escaped in JSON, or as a number', () => {
    const o = new Redactor({ API_TOKEN: 'hunter2-very-secret-value', DB_PASSWORD: 's3cr"et\\pass-2024', ACCOUNT_PIN_SECRET: '83749201' });
    expect(o.text('error: Bearer hunter2-very-secret-val…')).toBe('error: Bearer [redacted:API_TOKEN]…');
    expect(o.text('ery-secret-value was refused')).toBe('[redacted:API_TOKEN] was refused');
    expect(o.text(JSON.stringify({ p: 's3cr"et\\pass-2024' }))).toBe('{"p":"[redacted:DB_PASSWORD]"}');
    expect(o.value({ pin: 83749201, other: 1 })).toEqual({ pin: '[redacted:ACCOUNT_PIN_SECRET]', other: 1 });
  });

  it('replaces what is nested too deep to read with a note, never copies it unread', () => {
    let v: unknown = 'hunter2-very-secret-value';
    for (let i = 0; i < 210; i++) v = { a: v };
    expect(JSON.stringify(new Redactor({ API_TOKEN: 'hunter2-very-secret-value' }).value(v))).not.toContain('hunter2');
  });

  it('shows control characters and bidi overrides as escapes', () => {
    expect(safeText('evil\n\ngrade A')).toBe('evil\\n\\ngrade A');
    expect(safeText('\u001b[2Jx')).toBe('\\u001b[2Jx');
    expect(safeText('rtl\u202eevil')).toBe('rtl\\u202eevil');
    expect(safeText('nul\u0000')).toBe('nul\\u0000');
  });

  it('leaves ordinary text, including non-Latin letters and emoji, as it is', () => {
    expect(safeText('héllo 🔥 日本 │ tab-free')).toBe('héllo 🔥 日本 │ tab-free');
  });
});

describe('what counts as a secret', () => {
  it('paths and numbers are evidence, not secrets, unless the name says credential', async () => {
    const { isSecret } = await import('../../src/redact.js');
    expect(isSecret('MEMORY_FILE_PATH', '/tmp/x/memory.jsonl')).toBe(false);
    expect(isSecret('MEMORY_FILE_PATH', '/home/me/My Notes/memory.jsonl')).toBe(false);
    expect(isSecret('NOTE', '/not a path:with@colon')).toBe(true);
    expect(isSecret('PORT', '8080')).toBe(false);
    expect(isSecret('API_TOKEN', '/opt/token/file')).toBe(true);
    expect(isSecret('DATABASE_URL', 'postgres://u:p@127.0.0.1/db')).toBe(true);
    // Long enough, with digits or capitals, under any name: a secret.
    expect(isSecret('MODE', 'Lenient8but-long')).toBe(true);
    expect(isSecret('SESSION', 'x9f2k1m7q3')).toBe(true);
    // Lowercase words (a mode, a tool name, a list of them) are not: --env LABEL=read_graph must not
    // turn every read_graph in the report into [redacted:LABEL].
    expect(isSecret('MODE', 'lenient-but-long')).toBe(false);
    expect(isSecret('LABEL', 'read_graph')).toBe(false);
    expect(isSecret('TOOLS', 'write_now,delete_victim')).toBe(false);
    expect(isSecret('API_KEY', 'read_graph')).toBe(true);
    // A short common word in a variable not named like a credential is not a secret (it would
    // garble every text it occurs in): MODE=limit must not become "bounded-[redacted]s".
    expect(isSecret('MODE', 'limit')).toBe(false);
    expect(isSecret('API_KEY', 'limit')).toBe(true);
    expect(isSecret('npm_config_offline', 'true')).toBe(false);
  });
});

describe('a plain value cut short', () => {
  it('a word that only begins a plain value is left alone at the end of a text (the package name stays readable)', () => {
    // (A value with a digit: lowercase words alone are no secret at all.)
    const r = new Redactor({ MEMORY_FILE_PATH: 'memory-store-2.jsonl' });
    expect(r.text('@modelcontextprotocol/server-memory')).toBe('@modelcontextprotocol/server-memory');
    expect(r.text('wrote memory-store-2.jsonl')).toBe('wrote [redacted:MEMORY_FILE_PATH]');
    // Cut through the middle, with a plain secret's length still showing: hidden.
    expect(r.text('path: memory-sto')).toBe('path: [redacted:MEMORY_FILE_PATH]');
  });
});
