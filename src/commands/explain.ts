/** `sealmark explain [id]` and `sealmark list-checks`: docs generated from the checks' own data. */
import { checkById, checks } from '../checks/index.js';
import { renderCheckDoc, renderCheckList } from '../docs.js';
import { UsageError } from '../errors.js';

/** Prints one check's documentation, or the list of checks. Throws UsageError for an unknown id. */
export function runExplain(id: string | undefined): number {
  if (id === undefined) {
    process.stdout.write(renderCheckList(checks) + '\nsealmark explain <id> prints one check in full.\n');
    return 0;
  }
  const c = checkById(id);
  if (!c) throw new UsageError(`unknown check ${JSON.stringify(id)}; known: ${checks.map((x) => x.meta.id).join(', ')}`);
  process.stdout.write(renderCheckDoc(c.meta));
  return 0;
}

export function runListChecks(): number {
  process.stdout.write(renderCheckList(checks));
  return 0;
}
