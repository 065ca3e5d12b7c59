/**
 * argv → command → exit code. The only place that calls process.exit (STYLE).
 * Exit codes (SPEC section 2): 0 at or above the gate; 1 below it; 2 usage or config error;
 * 3 the target could not be audited.
 */
import { Command, CommanderError, Option } from 'commander';
import { isUserError } from './errors.js';
import { VERSION } from './version.js';
import { killAllTargets } from './target/stdio-transport.js';
import { disposeAllSandboxes } from './target/sandbox.js';
import { endAllFetches } from './target/fetch.js';
import { interruptedLine } from './run-state.js';

/** The report formats (SPEC section 2), listed here so that --help needs no reporter loaded. */
const FORMAT_LIST = 'text, json, sarif, junit, html';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * Ends every server sealmark started when sealmark itself is interrupted or exits: the targets run
 * in their own process groups, so a terminal's Ctrl-C would not reach them otherwise.
 */
function guardChildren(): void {
  const cleanUp = () => {
    endAllFetches();
    killAllTargets();
    disposeAllSandboxes();
  };
  process.once('exit', cleanUp);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      cleanUp();
      process.stderr.write(`${process.stderr.isTTY ? '\r\u001b[2K' : ''}${interruptedLine(sig)}\n`);
      process.exit(sig === 'SIGINT' ? 130 : sig === 'SIGHUP' ? 129 : 143);
    });
  }
}

/** Parses argv and runs the command; resolves to the exit code. Never throws. */
export async function main(argv: string[]): Promise<number> {
  guardChildren();
  // A reader that goes away (`| head`) is not an error of the run; later writes are dropped.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  const program = new Command();
  let code = 0;
  program
    .name('sealmark')
    .description('Grades MCP servers: calls their tools the way careless callers do and judges the replies.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  program
    .command('audit')
    .description('Audit an MCP server: sealmark audit [options] -- <command> [args…], or sealmark audit --url <url> [options]')
    .argument('[command...]', 'the server command and its arguments, after --')
    .option('--demo', 'audit the bundled demo server (planted flaws; exits 0 unless --fail-under is given)')
    .option('--url <url>', 'audit a server reached by URL (Streamable HTTP; the 2024-11-05 HTTP+SSE transport as the fallback)')
    .option('--client-config <file>', 'audit the servers of a Claude Desktop, Claude Code, Cursor, VS Code or generic mcpServers/servers JSON file')
    .option('--server <name>', 'with --client-config: only this server')
    .option('--package <spec>', 'audit a published package: npm:<name>[@version], pypi:<name>[==version] or oci:<image>[:tag] (fetched first, then run with no network)')
    .option('--server-json <file>', "audit an entry of the official MCP registry's server.json (a file, or one item of its list API)")
    .option('--package-index <n>', 'with --server-json: the entry packages[n] (default: the first package, else the first remote)')
    .option('--remote-index <n>', 'with --server-json: the entry remotes[n]')
    .option('--allow-install-scripts', 'let the fetch phase run install scripts (npm lifecycle scripts, Python source builds); off by default')
    .option('--header <header>', "with --url: a header for every request, 'Name: value' (repeatable)", collect, [])
    .option('--bearer-token-env <VAR>', 'with --url: send Authorization: Bearer $VAR (the token is never printed)')
    .option('--config <file>', 'config file (default: sealmark.config.json/.yaml found upward)')
    .option('--format <format>', `report format: ${FORMAT_LIST} (repeatable, paired in order with --output)`, collect, [])
    .option('--output <file>', 'write the report to this file (repeatable; the format may come from the extension)', collect, [])
    .option('--transcript <file.jsonl>', 'write every JSON-RPC message both ways as JSON lines')
    .option('--timeout-probe <sec>', 'seconds a probe call may take (timeout_probe_sec)')
    .option('--fail-under <grade>', 'exit 1 when the grade is below this letter (A-F) or percent')
    .option('--baseline <saved.json>', 'a saved JSON report: only findings new against it fail the run; fixed ones are listed')
    .option('--no-suppress', "ignore the config's suppress: entries: every finding counts (as a registry's public grade must)")
    .option('--only <checks>', 'run only these checks (comma-separated ids)')
    .option('--skip <checks>', 'skip these checks (comma-separated ids)')
    .option('--env <KEY=VALUE>', 'environment variable for the server (repeatable; a bare KEY takes its value from this environment)', collect, [])
    .option('--no-sandbox', 'run the server in this directory with your HOME and network (no scratch folders, shims or network namespace)')
    .addOption(new Option('--network <on|off>', 'off: loopback only inside the sandbox (default); on: the host network').choices(['on', 'off']))
    .option('--keep-sandbox', 'keep the scratch folders after the run (their path is printed)')
    .option('--all', 'default-call-effects: send {} to every tool, not only those with no required argument')
    .option('--allow-effects', 'with --no-sandbox, or where the sandbox has no copy-on-write filesystem: still call tools with default and filler arguments (their writes happen for real)')
    .option('--instances <n>', 'how many sandboxed instances of a server with many tools run at once (1 to 16; default: twice the cores plus one; 1: one after another)')
    .option('--quiet', 'no progress line')
    .option('--verbose', 'show informational findings and notes')
    .option('--no-color', 'no colour in text output')
    .action(async (command: string[], opts) => {
      // Commands load on demand: `--version` and `explain` must not pay for the MCP client and zod.
      const { runAudit } = await import('./commands/audit.js');
      code = await runAudit(command, opts);
    });

  program
    .command('lint')
    .description('Static checks on a saved tools/list result or tools array; no server: sealmark lint <tools.json> [options]')
    .argument('<tools.json>', 'a tools/list result ({ "tools": [...] }), a bare tools array, or a JSON-RPC response holding one')
    .option('--config <file>', 'config file (checks, severities, hidden_params …)')
    .option('--format <format>', `report format: ${FORMAT_LIST} (repeatable, paired in order with --output)`, collect, [])
    .option('--output <file>', 'write the report to this file (repeatable)', collect, [])
    .option('--fail-under <grade>', 'exit 1 when the grade is below this letter (A-F) or percent')
    .option('--baseline <saved.json>', 'a saved JSON report: only findings new against it fail the run')
    .option('--only <checks>', 'run only these checks (comma-separated ids)')
    .option('--skip <checks>', 'skip these checks (comma-separated ids)')
    .option('--verbose', 'show informational findings and notes')
    .option('--no-color', 'no colour in text output')
    .action(async (file: string, opts) => {
      const { runLint } = await import('./commands/lint.js');
      code = runLint(file, opts);
    });

  program
    .command('report')
    .description('Re-render a saved JSON report (from --format json) without calling the server: sealmark report <saved.json> [options]')
    .argument('<saved.json>', 'a report written by sealmark audit --format json')
    .option('--format <format>', `report format: ${FORMAT_LIST} (repeatable, paired in order with --output)`, collect, [])
    .option('--output <file>', 'write the report to this file (repeatable)', collect, [])
    .option('--fail-under <grade>', 'exit 1 when the grade is below this letter (A-F) or percent')
    .option('--baseline <saved.json>', 'compare with an earlier saved report: only new findings fail')
    .option('--verbose', 'show informational findings and notes')
    .option('--no-color', 'no colour in text output')
    .action(async (file: string, opts) => {
      const { runReport } = await import('./commands/report.js');
      code = runReport(file, opts);
    });

  program
    .command('call')
    .description('Replay one tools/call against a stdio server: sealmark call --tool <name> --args <json> -- <command> [args…]')
    .argument('[command...]', 'the server command and its arguments, after --')
    .option('--tool <name>', 'tool to call (required unless --raw-params)')
    .option('--url <url>', 'call a server reached by URL instead of a command')
    .option('--client-config <file>', 'call the server of an entry of a client configuration (with --server)')
    .option('--package <spec>', 'call a published package (npm:…, pypi:…, oci:…), from the install an audit fetched')
    .option('--server-json <file>', 'call the server of an entry of a server.json (with --package-index or --remote-index)')
    .option('--package-index <n>', 'with --server-json: the entry packages[n]')
    .option('--remote-index <n>', 'with --server-json: the entry remotes[n]')
    .option('--allow-install-scripts', 'let the fetch phase run install scripts')
    .option('--server <name>', 'with --client-config: the entry')
    .option('--header <header>', "with --url: a header for every request, 'Name: value' (repeatable)", collect, [])
    .option('--bearer-token-env <VAR>', 'with --url: send Authorization: Bearer $VAR')
    .option('--args <json>', 'the arguments object as JSON (omit to send no arguments member)')
    .option('--raw-args <text>', 'the arguments member written verbatim, unparsed (NaN, 1.0, a duplicate member); instead of --args')
    .option('--raw-params <text>', "the whole params member written verbatim ('[]'), without --tool: the replay of a malformed-params finding")
    .option('--method <name>', "with --raw-params: the request's method instead of tools/call (the replay of an unknown-method finding)")
    .option('--config <file>', 'config file whose env the server gets')
    .option('--no-sandbox', 'run the server in this directory with your HOME and network (its side effects happen for real)')
    .addOption(new Option('--network <on|off>', 'off: loopback only inside the sandbox (default); on: the host network, as an audit with --network on').choices(['on', 'off']))
    .option('--timeout-probe <sec>', 'seconds to wait for the reply', '10')
    .option('--env <KEY=VALUE>', 'environment variable for the server (repeatable)', collect, [])
    .action(async (command: string[], opts) => {
      const { runCall } = await import('./commands/call.js');
      code = await runCall(command, opts);
    });

  const fleet = program.command('fleet').description('Grade many servers (SPEC section 10): sealmark fleet run <targets…> --store <dir> [--queue redis://…], sealmark fleet worker --queue redis://…, sealmark fleet report --store <dir>');
  fleet
    .command('run')
    .description('Grade every job of the targets into a store, --jobs at a time; a re-run grades only what is new')
    .argument('<targets...>', 'server.json files or folders of them, saved pages of the registry list (GET /v0.1/servers), client configs, text files of launch lines')
    .option('--store <dir>', 'the folder that keeps the store (fleet.db); created when missing')
    .option('--jobs <n>', 'audits at once (default: half the cores, at least 1)')
    .option('--deadline <sec>', 'seconds one attempt of a job may take before its process tree is ended (outcome timeout; default 300)')
    .option('--regrade <server-name>', 'grade this server again even when it has a record under this ruler (repeatable)', collect, [])
    .option('--call-remotes', "call the tools of remote servers (remotes[], URLs); without it they get the handshake and static checks only")
    .option('--fetch-rate <n>', 'most package fetches started per minute per registry type (default 60)')
    .option('--attempts <n>', 'attempts for a flaky outcome (timeout, fetch-failed), with backoff (default 2)')
    .option('--transcripts <dir>', "keep each job's JSON-RPC transcript as <dir>/<job id>.jsonl")
    .option('--queue <url>', 'put the jobs on a BullMQ queue in Redis (redis://host:port, redis+unix:///path) for sealmark fleet worker, and collect their records')
    .option('--queue-name <name>', 'with --queue: the BullMQ queue to use (default sealmark-fleet); several runs share one Redis under different names')
    .option('--queue-timeout <sec>', 'with --queue: stop with an error when the queue does not answer for this long (default 120)')
    .action(async (targets: string[], opts) => {
      const { runFleetRun } = await import('./commands/fleet.js');
      code = await runFleetRun(targets, opts);
    });
  fleet
    .command('worker')
    .description('Run the jobs of a fleet run --queue: a BullMQ worker that hands each record back; SIGINT/SIGTERM close it gracefully')
    .option('--queue <url>', 'the Redis of the runner: redis://host:port, rediss://…, redis+unix:///path/to/redis.sock')
    .option('--queue-name <name>', "the runner's --queue-name (default sealmark-fleet)")
    .option('--jobs <n>', 'audits at once (default: half the cores, at least 1)')
    .option('--fetch-rate <n>', 'most package fetches started per minute per registry type, on this worker (default 60)')
    .option('--lock-duration <sec>', "seconds a job's lock lasts unless renewed; a killed worker's job runs again after about twice this (default 30)")
    .action(async (opts) => {
      const { runFleetWorker } = await import('./commands/fleet.js');
      code = await runFleetWorker(opts);
    });
  fleet
    .command('report')
    .description('Write the leaderboard of a store: index.json, index.html, a page and an SVG badge per server')
    .option('--store <dir>', 'the folder that keeps the store (fleet.db)')
    .option('--output <dir>', 'where to write it (default: <store>/report)')
    .action(async (opts) => {
      const { runFleetReport } = await import('./commands/fleet.js');
      code = await runFleetReport(opts);
    });

  program
    .command('explain')
    .description("Print a check's documentation; without an id, list all checks")
    .argument('[check-id]')
    .action(async (id: string | undefined) => {
      const { runExplain } = await import('./commands/explain.js');
      code = runExplain(id);
    });

  program
    .command('list-checks')
    .description('List checks: id, pack, weight, title')
    .action(async () => {
      const { runListChecks } = await import('./commands/explain.js');
      code = runListChecks();
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : 2;
    }
    if (isUserError(err)) {
      process.stderr.write(`sealmark: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`sealmark: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 2;
  }
}
