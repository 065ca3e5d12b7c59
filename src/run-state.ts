/**
 * What the running command has done so far, for the message of an interrupted run (SPEC section 8:
 * "an interrupted run says what it had done and that the server was stopped"). The audit command
 * updates it from its progress; the signal handler in cli.ts reads it. Nothing else depends on it.
 * `interrupted`, when set, makes the whole line (the fleet runner: its records and waiting jobs).
 */
export const runState: { phase?: string; tool?: string; calls: number; servers?: string; interrupted?: (signal: string) => string } = { calls: 0 };

/** The line printed when sealmark is interrupted by `signal` (`SIGINT`, `SIGTERM`, `SIGHUP`). */
export function interruptedLine(signal: string): string {
  // A command that says for itself what an interruption left (the fleet: its records and jobs).
  if (runState.interrupted) return runState.interrupted(signal);
  if (runState.phase === undefined) return `sealmark: interrupted (${signal}); nothing had started`;
  const where = `${runState.phase}${runState.tool ? `, tool ${runState.tool}` : ''}`;
  const calls = `${runState.calls} ${runState.calls === 1 ? 'call' : 'calls'} made`;
  return `sealmark: interrupted (${signal}) during ${where} after ${calls}${runState.servers ? ` (${runState.servers})` : ''}; every process it started was stopped and its scratch folders removed; no report was written`;
}
