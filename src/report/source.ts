/**
 * Where an audited server comes from on disk, so that reports can point into the user's
 * repository: SARIF locations for code scanning (issue 6, SPEC section 8), links in the HTML
 * report. Read once at the end of a run, before the report is built; reporters only read what is
 * recorded here.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Largest entry, source or source-map file read (bytes). */
const MAX_ENTRY_BYTES = 2 * 1024 * 1024;

/** Package manifests looked for, in this order, in each directory upward from the entry (or cwd). */
export const MANIFEST_NAMES = ['package.json', 'pyproject.toml'] as const;

/** A file and the 1-based line where each tool's name first appears in it. */
export interface SourceFile {
  file: string;
  toolLines: Record<string, number>;
}

/** The on-disk origin of a target. Paths are absolute. */
export interface TargetSource {
  /** The directory sealmark ran in (relative paths of the command were resolved against it). */
  cwd: string;
  /**
   * The repository root: the nearest directory at or above `cwd` that holds `.git`. SARIF paths
   * are relative to it (`%SRCROOT%`), as code scanning resolves them; absent outside a repository
   * (then `cwd` is the base).
   */
  root?: string;
  /** The config file the run used, when there was one. */
  configFile?: string;
  /**
   * The server's entry file: the first argument of the command that names an existing regular
   * file (`node server.js` → server.js), else the command itself when it is a path (`./server.js`). `toolLines`: the 1-based line where each
   * tool's name first appears quoted (`"get_note"`, `'get_note'`) or as a Python/JS function name.
   * `source`: the source file the entry was built from, when a source map says so (the entry's
   * `sourceMappingURL` comment, else `<entry>.map` beside it) and that file exists, with its own
   * tool lines.
   */
  entry?: SourceFile & { source?: SourceFile };
  /**
   * The nearest package manifest (`package.json`, `pyproject.toml`) at or above the entry's
   * directory (or `cwd`, without an entry or for one outside the repository), not above `root`:
   * SARIF's last resort for a location.
   */
  manifest?: string;
  /**
   * When `manifest` is a package.json: the 1-based line of each package it declares in
   * `dependencies`, `optionalDependencies`, `peerDependencies` or `devDependencies` (the first
   * declaration wins). SARIF places a finding an SDK causes at the line that brings the SDK in.
   */
  dependencyLines?: Record<string, number>;
}

/** Finds the entry file of `command` and the lines that define `toolNames`. Never throws. */
export function locateSource(command: readonly string[], cwd: string, configFile: string | undefined, toolNames: readonly string[]): TargetSource {
  const out: TargetSource = { cwd };
  const root = repositoryRoot(cwd);
  if (root) out.root = root;
  if (configFile) out.configFile = resolve(cwd, configFile);
  // The script an interpreter runs comes before the interpreter itself (`/usr/bin/node x.js`,
  // `.venv/bin/python server.py`); the command is the entry only when no argument names a file
  // (`./server.js`). A bare command name (`node`, `npx`) is looked up on PATH, not in cwd.
  const first = command[0] ?? '';
  const candidates = [...command.slice(1), ...(first.includes('/') ? [first] : [])].filter((w) => w !== '' && !w.startsWith('-'));
  for (const word of candidates) {
    const file = isAbsolute(word) ? word : resolve(cwd, word);
    const text = readSmall(file);
    if (text === null) continue;
    out.entry = { file, toolLines: text === undefined ? {} : toolLinesIn(text, toolNames) };
    if (text !== undefined) {
      const source = mappedSource(file, text, toolNames);
      if (source) out.entry.source = source;
    }
    break;
  }
  // An entry outside the repository (a package in a cache) says nothing of the user's project:
  // the manifest is then the one that applies to cwd.
  const base = root ?? resolve(cwd);
  const from = out.entry && inside(out.entry.file, base) ? dirname(out.entry.file) : cwd;
  const manifest = findManifest(from, root);
  if (manifest) out.manifest = manifest;
  if (manifest?.endsWith('package.json')) {
    const text = readSmall(manifest);
    if (typeof text === 'string') {
      const lines = dependencyLinesIn(text);
      if (Object.keys(lines).length > 0) out.dependencyLines = lines;
    }
  }
  return out;
}

/** The dependency sections of a package.json whose keys name packages. */
const DEPENDENCY_SECTIONS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies'];

/**
 * The 1-based line of each key of a package.json's dependency sections, read from the text (a
 * section's lines run from its `"dependencies": {` to the closing `}`); empty for text that does
 * not parse as JSON.
 */
export function dependencyLinesIn(text: string): Record<string, number> {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
  const found: Record<string, number> = Object.create(null) as Record<string, number>;
  const lines = text.split('\n');
  for (const section of DEPENDENCY_SECTIONS) {
    const deps = parsed[section];
    if (typeof deps !== 'object' || deps === null) continue;
    const start = lines.findIndex((l) => l.includes(`"${section}"`));
    if (start === -1) continue;
    for (const name of Object.keys(deps)) {
      if (Object.hasOwn(found, name)) continue;
      const key = `${JSON.stringify(name)}`;
      for (let i = start; i < lines.length; i++) {
        const l = lines[i]!;
        const at = l.indexOf(key);
        if (at !== -1 && /^\s*:/.test(l.slice(at + key.length))) {
          found[name] = i + 1;
          break;
        }
        if (i > start && /^\s*\}/.test(l)) break;
      }
    }
  }
  return found;
}

/** `null`: not a regular file; `undefined`: a file too large (or unreadable) to read; else its text. */
function readSmall(file: string): string | null | undefined {
  try {
    const st = statSync(file);
    if (!st.isFile()) return null;
    if (st.size > MAX_ENTRY_BYTES) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a worktree's file). */
function repositoryRoot(dir: string): string | undefined {
  let d = resolve(dir);
  for (;;) {
    if (existsSync(join(d, '.git'))) return d;
    const parent = dirname(d);
    if (parent === d) return undefined;
    d = parent;
  }
}

function inside(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The nearest manifest at or above `dir`; the search stops at `root` when `dir` is inside it. */
function findManifest(dir: string, root: string | undefined): string | undefined {
  let d = resolve(dir);
  const stop = root && inside(d, root) ? root : undefined;
  for (;;) {
    for (const name of MANIFEST_NAMES) {
      const candidate = join(d, name);
      try {
        if (statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
    const parent = dirname(d);
    if (d === stop || parent === d) return undefined;
    d = parent;
  }
}

/**
 * The source file `entry` was compiled from, read from its source map (Source Map Revision 3:
 * `sources`, `sourceRoot`): the map the last `sourceMappingURL` comment names (a file, or an inline
 * `data:` URL), else `<entry>.map`. Of several sources (a bundle), the one that names the most
 * tools, outside node_modules; only a source that exists on disk counts.
 */
function mappedSource(entry: string, text: string, toolNames: readonly string[]): SourceFile | undefined {
  const map = readMap(entry, text);
  if (!map) return undefined;
  const sources = Array.isArray(map.json.sources) ? map.json.sources : [];
  const sourceRoot = typeof map.json.sourceRoot === 'string' ? map.json.sourceRoot : '';
  let best: (SourceFile & { hits: number }) | undefined;
  for (const s of sources) {
    if (typeof s !== 'string' || s === '') continue;
    const file = sourcePath(map.dir, sourceRoot, s);
    if (!file || file === entry || file.split(sep).includes('node_modules')) continue;
    const src = readSmall(file);
    if (src === null) continue;
    const toolLines = src === undefined ? {} : toolLinesIn(src, toolNames);
    const hits = Object.keys(toolLines).length;
    if (!best || hits > best.hits) best = { file, toolLines, hits };
  }
  if (!best) return undefined;
  return { file: best.file, toolLines: best.toolLines };
}

/** A source of a map as an absolute path; `undefined` for a scheme other than file: (webpack://). */
function sourcePath(mapDir: string, sourceRoot: string, source: string): string | undefined {
  const joined = sourceRoot === '' ? source : `${sourceRoot.replace(/\/?$/, '/')}${source}`;
  if (joined.startsWith('file:')) {
    try {
      return fileURLToPath(joined);
    } catch {
      return undefined;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(joined)) return undefined;
  let decoded = joined;
  try {
    decoded = decodeURI(joined);
  } catch {
    // a path with a literal % stays as written
  }
  return resolve(mapDir, decoded);
}

function readMap(entry: string, text: string): { json: Record<string, unknown>; dir: string } | undefined {
  const refs = [...text.matchAll(/(?:\/\/|\/\*)[#@]\s*sourceMappingURL=([^\s*'"]+)/g)];
  const url = refs.length > 0 ? refs[refs.length - 1]![1]! : undefined;
  const dir = dirname(entry);
  let raw: string | undefined;
  let mapDir = dir;
  if (url?.startsWith('data:')) {
    const m = /^data:[^,]*?(;base64)?,(.*)$/s.exec(url);
    if (m) raw = m[1] ? Buffer.from(m[2]!, 'base64').toString('utf8') : decodeURIComponent(m[2]!);
  } else {
    let file: string | undefined;
    if (url !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(url)) {
      try {
        file = resolve(dir, decodeURI(url));
      } catch {
        file = resolve(dir, url);
      }
    } else if (url?.startsWith('file:')) {
      try {
        file = fileURLToPath(url);
      } catch {
        file = undefined;
      }
    }
    const candidates = [...(file ? [file] : []), `${entry}.map`];
    for (const c of candidates) {
      const t = readSmall(c);
      if (typeof t === 'string') {
        raw = t;
        mapDir = dirname(c);
        break;
      }
    }
  }
  if (raw === undefined) return undefined;
  try {
    const json = JSON.parse(raw.replace(/^\)\]\}'[^\n]*\n/, '')) as unknown;
    return typeof json === 'object' && json !== null && !Array.isArray(json) ? { json: json as Record<string, unknown>, dir: mapDir } : undefined;
  } catch {
    return undefined;
  }
}

function toolLinesIn(text: string, toolNames: readonly string[]): Record<string, number> {
  const lines = text.split('\n');
  // No prototype: a tool named `__proto__` or `constructor` is a key like any other.
  const found: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const name of toolNames) {
    if (name === '' || name.length > 200) continue;
    const quoted = [`"${name}"`, `'${name}'`, `\`${name}\``];
    let at = lines.findIndex((l) => quoted.some((q) => l.includes(q)));
    if (at === -1) {
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const fn = new RegExp(`\\b(?:def|function)\\s+${escaped}\\s*\\(`);
      at = lines.findIndex((l) => fn.test(l));
    }
    if (at !== -1) found[name] = at + 1;
  }
  return found;
}
