/**
 * Where an audited server comes from on disk, so that reports can point into the user's
 * repository: SARIF locations for code scanning (issue 6), links in the HTML report. Read once at
 * the end of a run, before the report is built; reporters only read what is recorded here.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** Largest entry file read to find tool definitions (bytes). */
const MAX_ENTRY_BYTES = 2 * 1024 * 1024;

/** The on-disk origin of a target. Paths are absolute. */
export interface TargetSource {
  /** The directory sealmark ran in (relative paths of the command were resolved against it). */
  cwd: string;
  /** The config file the run used, when there was one. */
  configFile?: string;
  /**
   * The server's entry file: the first argument of the command that names an existing regular
   * file (`node server.js` → server.js), else the command itself when it is a path (`./server.js`). `toolLines`: the 1-based line where each
   * tool's name first appears quoted (`"get_note"`, `'get_note'`) or as a Python/JS function name.
   */
  entry?: { file: string; toolLines: Record<string, number> };
}

/** Finds the entry file of `command` and the lines that define `toolNames`. Never throws. */
export function locateSource(command: readonly string[], cwd: string, configFile: string | undefined, toolNames: readonly string[]): TargetSource {
  const out: TargetSource = { cwd };
  if (configFile) out.configFile = resolve(cwd, configFile);
  // The script an interpreter runs comes before the interpreter itself (`/usr/bin/node x.js`,
  // `.venv/bin/python server.py`); the command is the entry only when no argument names a file
  // (`./server.js`). A bare command name (`node`, `npx`) is looked up on PATH, not in cwd.
  const first = command[0] ?? '';
  const candidates = [...command.slice(1), ...(first.includes('/') ? [first] : [])].filter((w) => w !== '' && !w.startsWith('-'));
  for (const word of candidates) {
    const file = isAbsolute(word) ? word : resolve(cwd, word);
    let size: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) continue;
      size = st.size;
    } catch {
      continue;
    }
    out.entry = { file, toolLines: size <= MAX_ENTRY_BYTES ? toolLinesIn(file, toolNames) : {} };
    break;
  }
  return out;
}

function toolLinesIn(file: string, toolNames: readonly string[]): Record<string, number> {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    return {};
  }
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
