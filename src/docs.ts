/**
 * Docs as data (STYLE, the ESLint lesson): `sealmark explain <id>` and `docs/checks/<id>.md` are
 * both rendered here from the check's own `meta`, so they cannot drift from the code.
 */
import type { Check, CheckMeta } from './checks/check.js';

/** A check's full documentation as Markdown (the text `explain` prints and docs/checks holds). */
export function renderCheckDoc(meta: CheckMeta): string {
  const L: string[] = [];
  L.push(`# ${meta.id}`, '', `${meta.title}`, '');
  L.push(`<!-- generated from src/checks/${meta.id}.ts by \`npm run docs\`; do not edit -->`, '');
  L.push(`| pack | weight | scope | decided by | since | default severity | in \`sealmark lint\` |`, `|---|---|---|---|---|---|---|`);
  L.push(`| ${meta.pack} | ${meta.weight} | ${meta.scope} | ${meta.decidedBy} | ${meta.since} | ${meta.severity} | ${meta.lint ? 'its static half' : 'n/a (needs a server)'} |`, '');
  L.push(meta.docs.summary, '');
  L.push('## Probes', '');
  for (const p of meta.probes) L.push(`- \`${p.id}\`${p.core ? ' (core)' : ''}${p.part ? ' (part)' : ''}: ${p.description}`);
  L.push('', '`core` marks the canonical probes of the check; the others are extra coverage. A part is a way of reading replies, not a call of its own.', '');
  L.push('## Settings', '');
  const keys = [
    { key: `checks.${meta.id}.enabled`, default: true as unknown, standard: 'free', meaning: 'Run this check.' },
    { key: `checks.${meta.id}.severity`, default: meta.severity as unknown, standard: 'free', meaning: 'error | warning | note: a failure at severity error makes the run exit 1 by default.' },
    ...meta.config,
  ];
  L.push('| key | default | standard | meaning |', '|---|---|---|---|');
  for (const k of keys) L.push(`| \`${k.key}\` | \`${JSON.stringify(k.default)}\` | ${k.standard} | ${k.meaning} |`);
  L.push('', 'A changed `locked` setting makes the run `non-standard`; the mark is shown next to every grade.', '');
  L.push('## How the verdict is established', '');
  for (const h of meta.docs.how) L.push(`- ${h}`);
  L.push('', '| verdict | when |', '|---|---|');
  for (const v of meta.verdicts) L.push(`| ${v.verdict} | ${v.when} |`);
  L.push('', '## Messages', '', '| message id | text |', '|---|---|');
  for (const [id, text] of Object.entries(meta.messages)) L.push(`| \`${id}\` | ${text.replace(/\|/g, '\\|')} |`);
  L.push('', '## What to fix', '', meta.docs.fix, '');
  L.push('## False positives', '');
  for (const x of meta.docs.falsePositives) L.push(`- ${x}`);
  L.push('', '## False negatives', '');
  for (const x of meta.docs.falseNegatives) L.push(`- ${x}`);
  L.push('', '## Limits', '');
  for (const x of meta.docs.limits) L.push(`- ${x}`);
  return L.join('\n') + '\n';
}

/** The list `sealmark explain` (no id) and `sealmark list-checks` print: id, pack, weight, title. */
export function renderCheckList(checks: readonly Check[]): string {
  const w = Math.max(...checks.map((c) => c.meta.id.length));
  const lines = checks.map((c) => `${c.meta.id.padEnd(w)}  ${c.meta.pack.padEnd(7)}  ${c.meta.weight.padEnd(8)}  ${c.meta.title}`);
  return `${'id'.padEnd(w)}  ${'pack'.padEnd(7)}  ${'weight'.padEnd(8)}  title\n` + lines.join('\n') + '\n';
}
