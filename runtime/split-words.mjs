#!/usr/bin/env node
// Splits a command line the way a POSIX shell splits words, for the GitHub Action (action.yml):
// whitespace (newlines included) separates words; single quotes keep everything; double quotes
// keep everything but `\"` and `\\`; a backslash outside quotes escapes the next character.
// Nothing is run or expanded: `$`, backquotes and the operators ; | & < > ( ) outside single quotes
// are refused with exit 2, so an input can never start a second command.
// Usage: node split-words.mjs <input-name> <text>  →  the words on stdout, each ended by NUL.

import { pathToFileURL } from 'node:url';

const [name = 'input', text = ''] = process.argv.slice(2);

/** The words of `s`; throws with a message naming what was refused. */
export function splitWords(s) {
  const words = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Error('an unclosed single quote');
      word += s.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      for (i++; ; i++) {
        if (i >= s.length) throw new Error('an unclosed double quote');
        const d = s[i];
        if (d === '"') break;
        if (d === '$' || d === '`') throw new Error(`${d} inside double quotes (nothing is expanded; use single quotes for a literal)`);
        if (d === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\')) word += s[++i];
        else word += d;
      }
    } else if (c === '\\') {
      if (i + 1 < s.length && s[i + 1] !== '\n') word += s[++i];
      else i++;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if ('$`;|&<>()'.includes(c)) {
      throw new Error(`the shell character ${c} (nothing is run or expanded: give the words of one command)`);
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.stdout.write(splitWords(text).map((w) => `${w}\0`).join(''));
  } catch (err) {
    process.stderr.write(`sealmark: the ${name} input has ${err.message}\n`);
    process.exit(2);
  }
}
