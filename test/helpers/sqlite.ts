/**
 * Whether the fleet store's SQLite (better-sqlite3, an optional native dependency) loads here. A
 * fresh machine that cannot build it still installs and tests the rest of sealmark: the store's
 * suites are then skipped with a title that says why, unless SEALMARK_REQUIRE_SQLITE=1 (CI), where
 * they run and fail on the missing addon.
 */
import { loadSqlite } from '../../src/fleet/store.js';

function loads(): boolean {
  try {
    loadSqlite();
    return true;
  } catch {
    return false;
  }
}

/** better-sqlite3 loads and opens a database. */
export const HAVE_SQLITE = loads();

/** The store's suites must run (CI): a missing addon fails them. */
export const REQUIRE_SQLITE = process.env.SEALMARK_REQUIRE_SQLITE === '1';

/** Run the store's suites: the addon loads, or it is required. */
export const RUN_SQLITE = HAVE_SQLITE || REQUIRE_SQLITE;

/** A suite title that says, when the addon is missing, that the suite is skipped and why. */
export function sqliteTitle(title: string): string {
  return HAVE_SQLITE ? title : `${title} (better-sqlite3 is not built here: skipped, or failed with SEALMARK_REQUIRE_SQLITE=1)`;
}
